// trace-incomplete: the trace itself says records are missing. The recorder counts every way a record can be lost
// (CUPTI's dropped activity records, records the writer could not place, launches whose exit was lost, failed CUPTI
// or driver calls, activity buffers it could not allocate) and writes in the file header how the process ended; the
// reader reports damage (cut files, corrupt chunks). A verdict is only as good as its trace: a capture whose records
// were lost is "unknown", not "clean".
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analysis/trace_analysis.h"
#include "checks/checks.h"
#include "core/check_ids.h"
#include "core/plural.h"

namespace graphcheck::checks {

using analysis::CaptureWindow;
using analysis::TraceAnalysis;

namespace {

constexpr size_t kShownWarnings = 5;

std::string LossText(trace::LossKind kind, uint64_t count) {
  switch (kind) {
    case trace::LossKind::kActivityDropped:
      return absl::StrCat(Plural(count, "GPU activity record", "GPU activity records"),
                          " dropped by CUPTI (kernel, copy and memset times)");
    case trace::LossKind::kWriterDropped:
      return absl::StrCat(Plural(count, "record", "records"),
                          " the trace writer could not place (disk full or the file could not grow)");
    case trace::LossKind::kLaunchExitLost:
      return absl::StrCat(Plural(count, "kernel launch", "kernel launches"),
                          " whose exit was lost when launch recording was switched");
    case trace::LossKind::kCallError:
      return absl::StrCat(Plural(count, "CUPTI or driver query", "CUPTI or driver queries"),
                          " of the recorder that failed (fields left unknown)");
    case trace::LossKind::kActivityBufferFailed:
      return absl::StrCat(Plural(count, "activity buffer", "activity buffers"),
                          " that could not be allocated (their records were dropped)");
  }
  return absl::StrCat(Plural(count, "record", "records"), " lost");
}

std::string SignalName(int signal) {
  switch (signal) {
    case 4:
      return "SIGILL";
    case 6:
      return "SIGABRT";
    case 7:
      return "SIGBUS";
    case 8:
      return "SIGFPE";
    case 11:
      return "SIGSEGV";
    default:
      return absl::StrCat("signal ", signal);
  }
}

class TraceIncompleteCheck : public CheckOf<TraceAnalysis> {
 public:
  TraceIncompleteCheck()
      : CheckOf(CheckInfo{check_id::kTraceIncomplete,
                          "The trace is missing records",
                          Severity::kError,
                          CheckArea::kTraceIntegrity,
                          "The recorder counts every record it loses and the reader every damaged byte range. Losses "
                          "during a capture "
                          "make that capture's verdict unknown (error); losses outside captures weaken the step and "
                          "launch statistics "
                          "(warning); a trace without a clean end (SIGKILL, os._exit) is noted.",
                          {}}) {}

 protected:
  void Read(const TraceAnalysis& analysis, const BoundOptions& options, std::vector<Finding>* findings) const override {
    const trace::Trace& trace = analysis.trace();
    const trace::TraceIntegrity& integrity = trace.integrity;
    Damage(trace, findings);
    for (const trace::LossCount& loss : integrity.losses) Loss(analysis, loss, findings);
    End(trace, findings);
  }

 private:
  Finding Where(const trace::Trace& trace) const {
    Finding finding = NewFinding();
    if (trace.process.pid != 0) finding.where.pid = trace.process.pid;
    return finding;
  }

  // A cut or corrupted file, or one with no records at all: whatever its damaged part held is unknown.
  void Damage(const trace::Trace& trace, std::vector<Finding>* findings) const {
    // Only a trace read from a file has chunks; one built in memory (tests, JSON fixtures) has none and is not empty.
    const bool empty = trace.integrity.file_bytes != 0 && trace.integrity.chunks == 0;
    if (trace.read_warnings.empty() && !empty) return;
    Finding finding = Where(trace);
    finding.message =
        empty ? "The trace holds no records: the file ends after its header (cut, or the process died at once), so "
                "nothing can be said about this process's captures."
              : absl::StrCat("The trace is damaged (", Plural(trace.read_warnings.size(), "problem", "problems"),
                             " the reader stepped over): the records in the damaged ranges are lost, and a "
                             "capture that overlaps them has an unknown verdict.");
    for (size_t i = 0; i < std::min(kShownWarnings, trace.read_warnings.size()); ++i) {
      finding.evidence.push_back(trace.read_warnings[i]);
    }
    if (trace.read_warnings.size() > kShownWarnings) {
      finding.evidence.push_back(absl::StrCat("and ", trace.read_warnings.size() - kShownWarnings, " more"));
    }
    finding.fix =
        "Analyze the complete file: copy traces only after the program ended, and keep the trace directory on a disk "
        "with room; record again if the file was cut.";
    findings->push_back(std::move(finding));
  }

  void Loss(const TraceAnalysis& analysis, const trace::LossCount& loss, std::vector<Finding>* findings) const {
    const trace::Trace& trace = analysis.trace();
    // Captures whose span meets the loss's; a loss without times may have hit any of them.
    std::vector<std::string> hit;
    const std::vector<CaptureWindow>& windows = analysis.captures().windows();
    for (const CaptureWindow& window : windows) {
      const uint64_t begin = trace.api_calls[window.begin_call].start_ns;
      const uint64_t end = window.end_call ? trace.api_calls[*window.end_call].end_ns : ~uint64_t{0};
      const bool timed = loss.first_ns != 0;
      if (!timed || (loss.first_ns <= end && loss.last_ns >= begin)) {
        hit.push_back(absl::StrCat("capture on stream ", window.stream_id, " (thread ", window.thread_id, ")"));
      }
    }
    // Launches in flight when the sampler turned launch recording off are dropped by design, at a window's edge
    // where no step is measured: only inside a capture does such a loss leave something unknown.
    if (loss.kind == trace::LossKind::kLaunchExitLost && hit.empty()) return;
    Finding finding = Where(trace);
    finding.severity = hit.empty() ? Severity::kWarning : Severity::kError;
    finding.message =
        hit.empty()
            ? absl::StrCat("The recorder lost ", LossText(loss.kind, loss.count),
                           " outside every capture: capture verdicts hold, but step and launch statistics may be "
                           "short.")
            : absl::StrCat("The recorder lost ", LossText(loss.kind, loss.count), " while ",
                           Plural(hit.size(), "capture", "captures"), " ran: their verdict is unknown, not clean.");
    for (size_t i = 0; i < std::min(kShownWarnings, hit.size()); ++i) {
      finding.evidence.push_back(absl::StrCat("verdict unknown: ", hit[i]));
    }
    if (loss.first_ns != 0) {
      finding.evidence.push_back(absl::StrCat("lost between ", loss.first_ns, " and ", loss.last_ns, " ns"));
    }
    for (const trace::RecorderError& error : trace.integrity.errors) {
      if (error.kind != loss.kind || finding.evidence.size() >= 2 * kShownWarnings) continue;
      std::string text = absl::StrCat(trace::LossKindName(error.kind), " at ", error.time_ns, " ns: ", error.count);
      if (error.call != 0) absl::StrAppend(&text, ", ", trace.String(error.call), " returned ", error.code);
      if (error.stream_id != 0 || error.context_id != 0) {
        absl::StrAppend(&text, ", context ", error.context_id, " stream ", error.stream_id);
      }
      finding.evidence.push_back(std::move(text));
    }
    finding.fix =
        loss.kind == trace::LossKind::kWriterDropped
            ? "Give the trace directory room (--trace-dir on a disk with free space) and record again."
            : "Record again with fewer launches recorded outside captures (--launches sampled or none), or without "
              "other profilers; if it persists, report it with this trace.";
    findings->push_back(std::move(finding));
  }

  void End(const trace::Trace& trace, std::vector<Finding>* findings) const {
    const trace::TraceIntegrity& integrity = trace.integrity;
    // A process the hang watch ended: the hang check reports it, with where it waited.
    if (integrity.end == trace::TraceEnd::kUnknown || integrity.end == trace::TraceEnd::kClean ||
        integrity.end == trace::TraceEnd::kHung) {
      return;
    }
    // A forked helper that made no CUDA call (torch.compile's compile workers, a DataLoader worker) and was ended
    // without exit handlers has nothing missing.
    if (integrity.end == trace::TraceEnd::kRunning && trace.api_calls.empty()) return;
    Finding finding = Where(trace);
    finding.severity = Severity::kNote;
    finding.message =
        integrity.end == trace::TraceEnd::kCrashed
            ? absl::StrCat("The process died of ", SignalName(integrity.signal),
                           ": the trace holds everything recorded up to the crash; GPU work still in flight is "
                           "missing.")
            : "The trace has no clean end: the process was killed (SIGKILL), called os._exit, or is still running. "
              "Everything appended up to then is in the file; GPU activity not yet flushed is missing.";
    uint64_t last = 0;
    for (const trace::ApiCall& call : trace.api_calls) last = std::max(last, call.end_ns);
    if (last != 0) finding.evidence.push_back(absl::StrCat("last recorded call ended at ", last, " ns"));
    finding.fix =
        "Let the program return from main (or call sys.exit) rather than os._exit, so the recorder flushes GPU "
        "activity at exit.";
    findings->push_back(std::move(finding));
  }
};

}  // namespace

std::unique_ptr<Check> NewTraceIncompleteCheck() { return std::make_unique<TraceIncompleteCheck>(); }

}  // namespace graphcheck::checks
