// compile-cudagraph-skipped: torch.compile(mode="reduce-overhead") ran a compiled function without CUDA graphs.
// Inductor says why only in a log its users grep for ("skipping cudagraphs due to ..."); the Python probe records each
// reason with the Python stack of the call, so the finding names the function, the reason and what to change. One
// finding per reason and call site, with how many times it happened.
#include <map>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "analysis/trace_analysis.h"
#include "checks/checks.h"
#include "core/check_ids.h"
#include "trace/python_frames.h"

namespace graphcheck::checks {

using analysis::TraceAnalysis;

namespace {

constexpr size_t kQuotedReasonBytes = 400;

struct ReasonFix {
  absl::string_view needle;  // in inductor's reason
  absl::string_view fix;
};

// Inductor's reasons (torch 2.11, torch/_inductor/cudagraph_utils.py and cudagraph_trees.py), most specific first.
constexpr ReasonFix kFixes[] = {
    {"re-recording limit",
     "The function was recorded again and again (a new shape or a changed guard each time) until inductor gave up: "
     "give it a few fixed shapes (pad or bucket the varying dimension) so its graphs replay."},
    {"mutated inputs",
     "Do not mutate the function's inputs in place (x.add_(...), an index_put_ on an argument): return the new "
     "value instead, or keep the mutated state in the module's parameters and buffers, which cudagraphs treat as "
     "static."},
    {"cpu device",
     "Move every tensor the function reads to the GPU before calling it: a CPU tensor or a CPU operator in the graph "
     "forces an eager run."},
    {"non-cuda",
     "Move every tensor the function reads to the GPU before calling it: an input on another device forces an eager "
     "run."},
    {"dynamic shape",
     "Call the function with a few fixed shapes (pad or bucket the varying dimension), or accept eager runs for the "
     "dynamic shapes."},
    {"incompatible op",
     "Take the operator that CUDA graphs cannot hold (a host synchronization, an output whose shape depends on the "
     "data) out of the compiled region, or replace it with a static-shape equivalent."},
};

absl::string_view FixFor(absl::string_view reason) {
  for (const ReasonFix& entry : kFixes) {
    if (absl::StrContains(reason, entry.needle)) return entry.fix;
  }
  return "Remove the reason inductor gives (quoted above) from the compiled function, then check that the function "
         "runs as a graph (its replays appear in the trace).";
}

class CompileCudagraphSkippedCheck : public CheckOf<TraceAnalysis> {
 public:
  CompileCudagraphSkippedCheck()
      : CheckOf(CheckInfo{
            check_id::kCompileCudagraphSkipped,
            "torch.compile ran a function without CUDA graphs",
            Severity::kWarning,
            CheckArea::kTorchCompile,
            "torch.compile(mode='reduce-overhead') fell back to running a compiled function without CUDA graphs, for "
            "the reason inductor gives (mutated inputs, a CPU tensor, dynamic shapes, too many re-recordings...). The "
            "launch overhead graphs were meant to remove stays.",
            {}}) {}

 protected:
  void Read(const TraceAnalysis& analysis, const BoundOptions& options, std::vector<Finding>* findings) const override {
    const trace::Trace& trace = analysis.trace();
    // (reason, first user frame) -> finding index and count.
    std::map<std::pair<absl::string_view, std::string>, std::pair<size_t, uint32_t>> seen;
    for (const trace::CompileSkip& event : analysis.probe().records().compile_skips) {
      const std::vector<SourceFrame> frames = trace::PythonFrames(trace, event.at.stack);
      const SourceFrame* user = FirstUserFrame(frames);
      const std::string site = user == nullptr ? "" : absl::StrCat(user->file, ":", user->line);
      auto [it, inserted] = seen.try_emplace({event.reason, site}, findings->size(), 0);
      if (++it->second.second > 1) {
        (*findings)[it->second.first].evidence.back() = absl::StrCat("reported ", it->second.second, " times");
        continue;
      }
      const absl::string_view reason = event.reason;
      Finding finding = NewFinding();
      finding.where.python = frames;
      finding.where.thread_id = event.at.thread_id;
      if (trace.process.pid != 0) finding.where.pid = trace.process.pid;
      finding.message = absl::StrCat(
          "torch.compile ran ", site.empty() ? std::string("a compiled function") : "the function called at " + site,
          " without CUDA graphs: \"", reason.substr(0, kQuotedReasonBytes),
          reason.size() > kQuotedReasonBytes ? "..." : "", "\".");
      finding.fix = std::string(FixFor(reason));
      finding.evidence.push_back("reported 1 time");
      findings->push_back(std::move(finding));
    }
  }
};

}  // namespace

std::unique_ptr<Check> NewCompileCudagraphSkippedCheck() { return std::make_unique<CompileCudagraphSkippedCheck>(); }

}  // namespace graphcheck::checks
