// output-overwritten: the program read a graph's output after a later replay overwrote it. A graph writes its outputs
// into the same memory on every replay, so an output kept across replays (in a list, a cache, a generate loop's
// past logits) silently changes; torch.compile's cudagraph trees instead free such outputs and make the next access
// raise ("accessing tensor output of CUDAGraphs that has been overwritten by a subsequent run"). The Python probe
// records that exception at the program's line, and how many held outputs cudagraph trees freed before it.
#include "absl/strings/str_cat.h"
#include "analyzers/checks.h"
#include "analyzers/trace_analysis.h"

namespace graphcheck::analyzers {
namespace {

class OutputOverwrittenCheck : public AnalyzerCheck {
 public:
  const CheckInfo& info() const override {
    static const CheckInfo kInfo{
        "output-overwritten",
        "A graph's output was read after a later replay overwrote it",
        Severity::kError,
        CheckArea::kState,
        "Outputs of a CUDA graph live in memory the next replay overwrites. An output kept across replays without "
        "a copy changes under the program's feet; torch.compile's cudagraph trees turn that read into an error.",
        {}};
    return kInfo;
  }

 protected:
  void Analyze(const TraceAnalysis& analysis, const BoundOptions& options,
               std::vector<Finding>* findings) const override {
    const size_t first = findings->size();
    ReportPythonExceptions(analysis, NewFinding(), findings);
    if (findings->size() == first) return;
    const trace::Trace& trace = analysis.trace();
    uint64_t invalidations = 0;
    uint64_t outputs = 0;
    for (const trace::ProbeEvent& event : trace.probe_events) {
      if (event.kind != trace::ProbeEventKind::kOutputsInvalidated) continue;
      ++invalidations;
      outputs += event.value;
    }
    if (invalidations == 0) return;
    for (size_t i = first; i < findings->size(); ++i) {
      (*findings)[i].evidence.push_back(absl::StrCat("torch.compile's cudagraph trees freed ", outputs,
                                                     " output(s) the program still held, in ", invalidations,
                                                     " later run(s) of its graphs"));
    }
  }
};

}  // namespace

std::unique_ptr<Check> NewOutputOverwrittenCheck() { return std::make_unique<OutputOverwrittenCheck>(); }

}  // namespace graphcheck::analyzers
