// What the Python probe recorded (trace::ProbeEvent, python/probe/graphcheck_probe/), tied to the capture windows
// the recorder found: who began each capture (the program, make_graphed_callables, torch.compile's cudagraph trees,
// Transformer Engine, Megatron), and the Python exceptions that left a capture or ended the program, each mapped to
// the check it belongs to through the known-message table (stderr_messages.h). A trace recorded without the probe
// (C++ programs, --no-python-probe, traces older than format 1.3) has no probe events: every window's origin is then
// unknown and there are no exceptions.
#ifndef GRAPHCHECK_ANALYSIS_PYTHON_PROBE_H_
#define GRAPHCHECK_ANALYSIS_PYTHON_PROBE_H_

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

#include "analysis/capture_windows.h"
#include "analysis/nvtx_index.h"
#include "analysis/stderr_rules.h"
#include "core/finding.h"
#include "core/report.h"
#include "trace/events.h"
#include "trace/probe_records.h"
#include "trace/python_frames.h"

namespace graphcheck::analysis {

// An exception the probe saw leave a capture (its body, capture_begin or capture_end) or end the program or a thread.
struct PythonException {
  trace::PythonExceptionRecord record;
  const StderrRule* rule = nullptr;  // the known message it matched; null: none
  std::string check_id;              // the rule's check; "capture-error" for a capture exception no rule knows
  const trace::CaptureBegin* begin = nullptr;  // the capture-begin of the capture it left; null: none seen
  std::optional<size_t> window;                // the CUDA capture window it left, when CUDA's capture had begun
  // Reported as a finding of its own: the first exception of its capture, in a capture whose CUDA calls show no root
  // cause (else it is evidence on that cause's finding), or an uncaught exception a rule knows that no capture
  // exception already reported.
  bool reported = false;
};

// The program's outermost torch.autograd.backward() on one thread, from the probe's backward-begin to its end.
struct BackwardCall {
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint32_t thread_id = 0;
  trace::PythonStackId stack = 0;  // the program's call
};

// The probe's records (decoded once here) tied to the capture windows. Records point into their own vectors, so an
// index is moved, never copied.
class ProbeIndex {
 public:
  ProbeIndex(const trace::Trace& trace, const CaptureAnalysis& captures);
  ProbeIndex(const ProbeIndex&) = delete;
  ProbeIndex& operator=(const ProbeIndex&) = delete;
  ProbeIndex(ProbeIndex&&) = default;
  ProbeIndex& operator=(ProbeIndex&&) = default;

  // Every probe event of the trace as its kind's record.
  const trace::ProbeRecords& records() const { return records_; }
  // Who began capture window `window`; kUnknown when no probe event matches it.
  trace::ProbeOrigin Origin(size_t window) const;
  // The probe's capture-begin of window `window`; null when none matches it.
  const trace::CaptureBegin* Begin(size_t window) const;
  // The probe's capture-end of window `window`'s graph; null when none.
  const trace::CaptureEnd* End(size_t window) const;
  // In event order.
  const std::vector<PythonException>& exceptions() const { return exceptions_; }
  // Whether a Python exception left capture window `window` (then the window's empty or missing graph is its doing).
  bool HasException(size_t window) const;
  // Whether torch.compile's cudagraph trees recorded any graph in this process.
  bool cudagraph_trees() const { return cudagraph_trees_; }
  // The backward() a call made at `time_ns` on `thread_id` ran under, when that thread is not the one that called
  // backward() (autograd's own threads run the CUDA backward and no Python); null otherwise.
  const BackwardCall* BackwardAround(uint64_t time_ns, uint32_t thread_id) const;

 private:
  trace::ProbeRecords records_;
  std::vector<const trace::CaptureBegin*> window_begin_;  // per capture window
  std::vector<trace::ProbeOrigin> window_origin_;         // per capture window
  std::vector<PythonException> exceptions_;
  std::vector<BackwardCall> backwards_;  // by start
  bool cudagraph_trees_ = false;
};

// When the finding's Python stack left the program for a third-party library (not PyTorch): an evidence line naming
// the library's line and the program's line that called it, and what the program can do about it in the fix.
void AddLibraryAdvice(Finding* finding);

// torch.compile's CUDA graphs as report metrics (none unless cudagraph trees recorded or inductor skipped graphs): the
// graphs recorded, the program's lines whose calls recorded them, their launches, and inductor's skips.
std::vector<Metric> ProbeMetrics(const trace::Trace& trace, const ProbeIndex& probe,
                                 const std::vector<CaptureWindow>& windows);

// What `graphcheck run --shadow` compared (none without shadow comparisons): calls compared, calls left out as
// random, outputs compared, and what a shadowed call cost.
std::vector<Metric> ShadowMetrics(const trace::Trace& trace);

// The stretches in which the probe ran its own eager work under --shadow (AUDIT_BEGIN to AUDIT_END on one thread),
// sorted by start; a begin left open ends with the trace.
std::vector<TimeInterval> AuditSpans(const trace::ProbeRecords& records);

// "torch.compile's cudagraph trees" and the like, for messages.
std::string DescribeOrigin(trace::ProbeOrigin origin);
// The graph a library's capture made, from its capture-begin event, for messages: "Megatron's layer 3 forward
// graph", "Megatron's full-iteration training graph"; "" for captures whose origin names no graph of its own (the
// program's, make_graphed_callables', which the capture site says better).
std::string LibraryGraphName(const trace::CaptureBegin& capture_begin);
// Whether the graphs of `origin` are a forward whose saved activations stay in the pool until its backward graph
// replays (make_graphed_callables, Transformer Engine, Megatron's layers): what a replay leaves there is not consumed
// right away.
bool HoldsActivationsForBackward(trace::ProbeOrigin origin);
// Captures begun by a framework's own machinery rather than as the program's work to graph: cudagraph trees' empty
// capture that creates its memory pool.
bool IsGraphMachinery(trace::ProbeOrigin origin);
// The memory pool of capture window `window` as the probe's capture-end event of its graph names it
// (CUDAGraph.pool()): for the program's captures, make_graphed_callables', Transformer Engine's and Megatron's; none
// for torch.compile's cudagraph trees (which manage their pool themselves) and for captures the probe did not see.
std::optional<uint64_t> ProgramPoolOf(const ProbeIndex& probe, size_t window);
// What capture window `window` left allocated when it ended, by PyTorch's allocator's count (its outputs, a cuBLAS
// workspace): the part of its pool that stays in use after capture. From the capture-end event (format 1.5).
std::optional<uint64_t> BytesLeftAllocated(const ProbeIndex& probe, size_t window);

// Where a probe record happened: its Python frames (the user's first), thread and process.
Location ProbeEventLocation(const trace::Trace& trace, const trace::ProbeHeader& at);

// "RuntimeError: CUDA error: ..." of an exception, shortened for a message.
std::string ExceptionText(const trace::PythonExceptionRecord& exception);
// The lines after an exception's first, trimmed, bounded in number and length: the details of a known message
// (Megatron's "CUDA graph argument mismatch:" lists each argument's received and expected shape).
std::vector<std::string> ExceptionDetails(absl::string_view text);

}  // namespace graphcheck::analysis

#endif  // GRAPHCHECK_ANALYSIS_PYTHON_PROBE_H_
