// output-overwritten: the program read a graph's output after a later replay overwrote it. A graph writes its outputs
// into the same memory on every replay, so an output kept across replays (in a list, a cache, a generate loop's
// past logits) silently changes; torch.compile's cudagraph trees instead free such outputs and make the next access
// raise ("accessing tensor output of CUDAGraphs that has been overwritten by a subsequent run"). The Python probe
// records that exception at the program's line, and how many held outputs cudagraph trees freed before it; for manual
// captures (torch.cuda.graph), it records a static output to which the program holds more references at each replay
// (kept in a list without .clone(): every entry is the same memory, holding the last replay's values); for callables
// graphed by make_graphed_callables, an output the program reads after calling the callable again (`a = f(x);
// b = f(y); g(a)`: every call writes into the same static memory, so a holds b's values).
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analysis/graph_contract.h"
#include "analysis/python_probe.h"
#include "analysis/trace_analysis.h"
#include "checks/checks.h"
#include "checks/trace/probe_findings.h"
#include "core/check_ids.h"
#include "core/plural.h"

namespace graphcheck::checks {

using analysis::GraphContract;
using analysis::LaunchesWriteInto;
using analysis::ProbeEventLocation;
using analysis::ReadAcrossLaunch;
using analysis::ReadGraphContracts;
using analysis::TraceAnalysis;

namespace {

class OutputOverwrittenCheck : public CheckOf<TraceAnalysis> {
 public:
  OutputOverwrittenCheck()
      : CheckOf(CheckInfo{
            check_id::kOutputOverwritten,
            "A graph's output was read after a later replay overwrote it",
            Severity::kError,
            CheckArea::kState,
            "Outputs of a CUDA graph live in memory the next replay overwrites. An output kept across replays without "
            "a copy changes under the program's feet; torch.compile's cudagraph trees turn that read into an error.",
            {}}) {}

 protected:
  void Read(const TraceAnalysis& analysis, const BoundOptions& options, std::vector<Finding>* findings) const override {
    ReportHeldOutputs(analysis, findings);
    ReportCompiledOutputsRead(analysis, findings);
  }

 private:
  void ReportHeldOutputs(const TraceAnalysis& analysis, std::vector<Finding>* findings) const {
    const trace::Trace& trace = analysis.trace();
    std::vector<const trace::OutputsHeld*> across_replays;
    for (const trace::OutputsHeld& held : analysis.probe().records().outputs_held) {
      if (held.overwritten_by != 0) {
        across_replays.push_back(&held);
        continue;
      }
      const std::string name(held.name);
      Finding finding = NewFinding();
      if (held.at.origin == trace::ProbeOrigin::kGraphedCallables) {
        finding.message =
            absl::StrCat("`", name,
                         "` holds an output of a callable graphed by make_graphed_callables, and the program reads it "
                         "after calling that callable again: every call writes its outputs into the same memory, so `",
                         name, "` holds the later call's values.");
        finding.evidence.push_back(absl::StrCat("`", name, "` is read after the next call, before it is rebound"));
      } else if (held.references_added == 0) {
        // The probe found the output kept in an object's attribute by a method that reads it before storing anew.
        finding.message = absl::StrCat(
            "`", name, "` keeps an output of the graph", trace::CapturedAt(trace, held.graph),
            " as it is, and the method that stores it reads it first, after the next replay: every replay writes "
            "its outputs into the same memory, so the value kept is the new one, not the one from before.");
        finding.evidence.push_back(absl::StrCat("`", name, "` is the graph's output itself, not a copy"));
      } else {
        finding.message = absl::StrCat(
            "The program keeps `", name, "`, an output of the graph", trace::CapturedAt(trace, held.graph),
            ", across replays without a copy: each replay overwrites it in place, so everything kept holds the last "
            "replay's values.");
        finding.evidence.push_back(absl::StrCat("the program held ",
                                                Plural(held.references_added, "more reference", "more references"),
                                                " to `", name, "` with each replay looked at"));
      }
      finding.where = ProbeEventLocation(trace, held.at);
      finding.where.key = name;
      finding.fix = absl::StrCat("Keep a copy of what must outlive the next ",
                                 held.at.origin == trace::ProbeOrigin::kGraphedCallables ? "call" : "replay", " (",
                                 name, ".clone(), or .item() / .cpu() for values to log).");
      findings->push_back(std::move(finding));
    }
    ReportReadAcrossEarlierReplays(analysis, across_replays, findings);
  }

  // A later capture's output, held by a variable of the program's, read across a replay of a graph captured before it
  // into the same pool (the probe's pool_order.py), where the recorder does not show that replay leaving the output's
  // memory alone. One finding per variable and line, naming every pair of graphs seen there.
  void ReportReadAcrossEarlierReplays(const TraceAnalysis& analysis, const std::vector<const trace::OutputsHeld*>& held,
                                      std::vector<Finding>* findings) const {
    if (held.empty()) return;
    const trace::Trace& trace = analysis.trace();
    const std::vector<GraphContract> contracts = ReadGraphContracts(analysis);
    std::vector<ReadAcrossLaunch> reads;
    for (const trace::OutputsHeld* event : held) {
      reads.push_back({CaptureOf(analysis, contracts, event->overwritten_by, event->at.time_ns), event->address,
                       event->at.time_ns});
    }
    const std::vector<std::optional<bool>> launch_writes = LaunchesWriteInto(analysis, reads);
    std::map<std::pair<std::string, std::string>, size_t> by_holder;  // (where, name) -> index into findings
    for (size_t i = 0; i < held.size(); ++i) {
      const trace::OutputsHeld* event = held[i];
      const std::optional<bool>& writes = launch_writes[i];
      if (writes.has_value() && !*writes) continue;  // that replay leaves the output's memory alone
      const std::string name(event->name);
      const std::string pair =
          absl::StrCat("the graph", trace::CapturedAt(trace, event->graph), ", read across a replay of the graph",
                       trace::CapturedAt(trace, event->overwritten_by));
      const std::string writes_text =
          writes.has_value()
              ? absl::StrFormat("that replay writes into the block holding the output at 0x%x", event->address)
              : std::string("graphs that share a pool are to be replayed in the order they were captured");
      Location where = ProbeEventLocation(trace, event->at);
      where.key = name;
      const SourceFrame* line = FirstUserFrame(where);
      const std::string site = line != nullptr ? absl::StrCat(line->file, ":", line->line) : std::string();
      const auto [it, added] = by_holder.emplace(std::make_pair(site, name), findings->size());
      if (!added) {
        (*findings)[it->second].evidence.push_back(absl::StrCat("also an output of ", pair));
        continue;
      }
      Finding finding = NewFinding();
      if (event->at.origin == trace::ProbeOrigin::kGraphedCallables) {
        finding.message = absl::StrCat(
            "`", name,
            "` holds an output of a callable that make_graphed_callables graphed together with others, and the "
            "program reads it after calling one that comes before it in that tuple: callables graphed together share "
            "one memory pool, and the earlier one's graphs write their temporaries into memory the later one's "
            "capture took for its outputs, so what `",
            name, "` holds when it is read is not that output's value.");
        finding.evidence.push_back("an output of a later callable of the tuple, read across a call of an earlier one");
      } else {
        finding.message = absl::StrCat(
            "`", name, "` holds an output of the graph", trace::CapturedAt(trace, event->graph),
            ", and the program reads it after replaying the graph", trace::CapturedAt(trace, event->overwritten_by),
            ", which was captured before it into the same memory pool: that replay writes its temporaries into "
            "memory the later capture took for its output, so what `",
            name, "` holds when it is read is not that output's value.");
        finding.evidence.push_back(absl::StrCat("an output of ", pair, ": ", writes_text));
      }
      finding.where = std::move(where);
      finding.fix = absl::StrCat(
          "Copy the output right after it is made (", name, ".clone()), ",
          event->at.origin == trace::ProbeOrigin::kGraphedCallables
              ? "call callables graphed together in the order of the tuple, or graph them apart."
              : "replay graphs that share a pool in the order they were captured, or capture each in a pool of its "
                "own.");
      findings->push_back(std::move(finding));
    }
  }

  // The latest capture of the probe's Python graph `python_graph` before `time_ns`; null when none is in the trace.
  static const GraphContract* CaptureOf(const TraceAnalysis& analysis, const std::vector<GraphContract>& contracts,
                                        uint64_t python_graph, uint64_t time_ns) {
    const GraphContract* found = nullptr;
    for (const GraphContract& contract : contracts) {
      const trace::CaptureBegin* begin = analysis.probe().Begin(contract.window);
      if (begin != nullptr && begin->graph == python_graph && begin->at.time_ns < time_ns) found = &contract;
    }
    return found;
  }

  void ReportCompiledOutputsRead(const TraceAnalysis& analysis, std::vector<Finding>* findings) const {
    const size_t first = findings->size();
    ReportPythonExceptions(analysis, NewFinding(), findings);
    if (findings->size() == first) return;
    const std::vector<trace::OutputsInvalidated>& invalidated = analysis.probe().records().outputs_invalidated;
    const uint64_t invalidations = invalidated.size();
    uint64_t outputs = 0;
    for (const trace::OutputsInvalidated& event : invalidated) outputs += event.held;
    if (invalidations == 0) return;
    for (size_t i = first; i < findings->size(); ++i) {
      (*findings)[i].evidence.push_back(absl::StrCat(
          "torch.compile's cudagraph trees freed ", Plural(outputs, "output", "outputs"),
          " the program still held, in ", Plural(invalidations, "later run", "later runs"), " of its graphs"));
    }
  }
};

}  // namespace

std::unique_ptr<Check> NewOutputOverwrittenCheck() { return std::make_unique<OutputOverwrittenCheck>(); }

}  // namespace graphcheck::checks
