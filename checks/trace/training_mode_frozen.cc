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
#include "core/check_ids.h"

namespace graphcheck::checks {

using analysis::LibraryGraphName;
using analysis::ProbeEventLocation;
using analysis::TraceAnalysis;

namespace {

class TrainingModeFrozenCheck : public CheckOf<TraceAnalysis> {
 public:
  TrainingModeFrozenCheck()
      : CheckOf(CheckInfo{check_id::kTrainingModeFrozen,
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
    const trace::ProbeRecords& records = analysis.probe().records();
    for (const trace::TrainingModeChange& change : records.training_mode_changes) {
      const bool captured_training = change.captured_training;
      const trace::CaptureBegin* begin = records.FirstCaptureBeginOf(change.graph);
      const std::string library = begin != nullptr ? LibraryGraphName(*begin) : "";
      Finding finding = NewFinding();
      finding.message = absl::StrCat(
          "This replay of ", library.empty() ? "the graph" : library, trace::CapturedAt(trace, change.graph),
          " runs with ", change.modules, change.modules == 1 ? " module" : " modules", " in ",
          captured_training ? "eval" : "training", " mode that the capture recorded in ",
          captured_training ? "training" : "eval", " mode: the graph replays ",
          captured_training ? "dropout and batch-norm updates as in training, so eval results are noisy and "
                              "batch-norm statistics keep moving"
                            : "eval behaviour (no dropout, frozen batch-norm statistics) although the program trains",
          ".");
      finding.evidence.push_back(
          absl::StrCat(captured_training ? "in eval mode now: " : "in training mode now: ", change.names));
      finding.where = ProbeEventLocation(trace, change.at);
      finding.fix = captured_training
                        ? "Capture a separate graph in eval mode (under torch.no_grad()) for evaluation and replay "
                          "the one that matches the mode, or run evaluation eagerly; with Megatron-Core's per-layer "
                          "graphs, run validation without them (cuda_graph_scope that excludes it, or an eager "
                          "forward) until separate validation graphs are captured (Megatron-LM PR #6992)."
                        : "Call model.train() before capturing the training graph, or capture one graph per mode.";
      findings->push_back(std::move(finding));
    }
  }
};

}  // namespace

std::unique_ptr<Check> NewTrainingModeFrozenCheck() { return std::make_unique<TrainingModeFrozenCheck>(); }

}  // namespace graphcheck::checks
