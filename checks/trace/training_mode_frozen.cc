// training-mode-frozen: a graph replays while the modules it captured are in another training mode than at capture.
// A capture records kernels, not `if self.training:`: dropout captured in training mode keeps dropping in every
// replay under model.eval() (an inference graph captured before eval(), a validation pass that replays the training
// graphs: Megatron-Core's per-layer graphs, Megatron-LM PR #6992), and batch norm keeps updating its statistics. The
// Python probe notes, for each capture, the modules whose forward ran inside it and read their training flag, and
// compares them at the graph's first replays and at the first replay after every Module.train()/eval().
#include "absl/strings/str_cat.h"
#include "analysis/python_probe.h"
#include "analysis/trace_analysis.h"
#include "checks/checks.h"

namespace graphcheck::checks {

using analysis::LibraryGraphName;
using analysis::ProbeEventLocation;
using analysis::TraceAnalysis;

namespace {

class TrainingModeFrozenCheck : public CheckOf<TraceAnalysis> {
 public:
  TrainingModeFrozenCheck()
      : CheckOf(CheckInfo{"training-mode-frozen",
                          "A graph replays in another training mode than it was captured in",
                          Severity::kError,
                          CheckArea::kState,
                          "Modules whose forward reads their training flag were captured in one mode and the graph "
                          "replays while they are in the other: dropout and batch norm keep the behaviour baked in "
                          "at capture.",
                          {}}) {}

 protected:
  void Read(const TraceAnalysis& analysis, const BoundOptions&, std::vector<Finding>* findings) const override {
    const trace::Trace& trace = analysis.trace();
    for (const trace::ProbeEvent& event : trace.probe_events) {
      if (event.kind != trace::ProbeEventKind::kTrainingModeChanged) continue;
      const bool captured_training = event.value == 1;
      const std::string library = LibraryGraphName(trace, FindBegin(trace, event.graph));
      Finding finding = NewFinding();
      finding.message = absl::StrCat(
          "This replay of ", library.empty() ? "the graph" : library, trace::CapturedAt(trace, event.graph),
          " runs with ", event.value_now, event.value_now == 1 ? " module" : " modules", " in ",
          captured_training ? "eval" : "training", " mode that the capture recorded in ",
          captured_training ? "training" : "eval", " mode: the graph replays ",
          captured_training ? "dropout and batch-norm updates as in training, so eval results are noisy and "
                              "batch-norm statistics keep moving"
                            : "eval behaviour (no dropout, frozen batch-norm statistics) although the program trains",
          ".");
      finding.evidence.push_back(
          absl::StrCat(captured_training ? "in eval mode now: " : "in training mode now: ", trace.String(event.text)));
      finding.where = ProbeEventLocation(trace, event);
      finding.fix = captured_training
                        ? "Capture a separate graph in eval mode (under torch.no_grad()) for evaluation and replay "
                          "the one that matches the mode, or run evaluation eagerly; with Megatron-Core's per-layer "
                          "graphs, run validation without them (cuda_graph_scope that excludes it, or an eager "
                          "forward) until separate validation graphs are captured (Megatron-LM PR #6992)."
                        : "Call model.train() before capturing the training graph, or capture one graph per mode.";
      findings->push_back(std::move(finding));
    }
  }

 private:
  static const trace::ProbeEvent& FindBegin(const trace::Trace& trace, uint64_t graph) {
    static const trace::ProbeEvent kNone;
    for (const trace::ProbeEvent& e : trace.probe_events) {
      if (e.kind == trace::ProbeEventKind::kCaptureBegin && e.graph == graph) return e;
    }
    return kNone;
  }
};

}  // namespace

std::unique_ptr<Check> NewTrainingModeFrozenCheck() { return std::make_unique<TrainingModeFrozenCheck>(); }

}  // namespace graphcheck::checks
