// dynamic-shape: steps launch the same kernels but with different grid or block sizes, or copy different numbers of
// bytes: the shapes change between steps (variable batch or sequence length). A graph freezes the captured sizes.
// Only steps with the most common kernel sequence are compared, so a control-flow change is not reported twice.
// In `graphcheck check --vary NAME:DIM=SIZES` the engine's ShapeVariation names the input and dimension instead, with
// the graphs each size needs (their nodes and pool memory), which the engine captured.
#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "analysis/python_probe.h"
#include "analysis/step_signatures.h"
#include "analysis/trace_analysis.h"
#include "checks/checks.h"
#include "checks/trace/internal/capture_problem_check.h"
#include "checks/trace/internal/eager_phase.h"
#include "core/check_ids.h"
#include "core/plural.h"
#include "engine/run/engine_run.h"

namespace graphcheck::checks {

using analysis::DescribeOperation;
using analysis::FirstDifference;
using analysis::Iteration;
using analysis::Iterations;
using analysis::LaunchRecorded;
using analysis::MostCommonStep;
using analysis::OperatorClause;
using analysis::ProbeEventLocation;
using analysis::SameShape;
using analysis::SignSteps;
using analysis::StepOperations;
using analysis::StepSignatures;
using analysis::TraceAnalysis;
using analysis::TrustedSteps;

namespace {

class DynamicShapeCheck : public CheckOf<TraceAnalysis, EngineRun> {
 public:
  DynamicShapeCheck()
      : CheckOf(CheckInfo{
            check_id::kDynamicShape,
            "Launch sizes change between steps",
            Severity::kWarning,
            CheckArea::kEagerRegion,
            "Steps of the region to graph launch the same kernels with different grid sizes or copy different amounts: "
            "tensor shapes change between steps. A CUDA graph replays the captured sizes.",
            {}}) {}

  // An engine run counts only where it varied a dimension.
  bool CanRun(const CheckInputs& inputs) const override {
    const EngineRun* engine = inputs.Find<EngineRun>();
    return inputs.Find<TraceAnalysis>() != nullptr || (engine != nullptr && engine->shape_variation.has_value());
  }

 protected:
  void Read(const TraceAnalysis* analysis, const EngineRun* engine, const BoundOptions& options,
            std::vector<Finding>* findings) const override {
    if (analysis != nullptr) {
      ReportGraphedCallsOfOtherShapes(*analysis, findings);
      ReportVaryingLaunches(*analysis, options, findings);
    }
    if (engine != nullptr && engine->shape_variation) ReportVariedDimension(*engine, findings);
  }

 private:
  // A callable graphed by make_graphed_callables called with inputs of another shape than it captured (the Python
  // probe's input-shape-changed events): PyTorch raised copying the input into the static one, or copied it in
  // silently (broadcast) and the replay computed on the captured shape. One finding per callable and change.
  void ReportGraphedCallsOfOtherShapes(const TraceAnalysis& analysis, std::vector<Finding>* findings) const {
    const trace::Trace& trace = analysis.trace();
    for (const trace::InputShapeChange& event : analysis.probe().records().input_shape_changes) {
      const absl::string_view change = event.description;
      Finding finding = NewFinding();
      finding.severity = Severity::kError;
      finding.where = ProbeEventLocation(trace, event.at);
      finding.where.key = std::string(change);
      std::string consequence;
      if (event.handling == trace::ShapeChangeHandling::kRaised) {
        consequence = "PyTorch raised copying it into the graph's static input, which has the captured shape";
        if (!event.error.empty()) finding.evidence.push_back(absl::StrCat("PyTorch raised ", event.error));
      } else if (event.handling == trace::ShapeChangeHandling::kBroadcast) {
        consequence =
            "PyTorch copied it into the graph's static input by broadcasting, with no error: the replay computed on "
            "the captured shape, so its outputs do not belong to this input";
      } else {
        consequence =
            "PyTorch converted it into the static input's dtype silently: the replay computed in the "
            "captured dtype";
      }
      finding.message = absl::StrCat("A callable graphed by make_graphed_callables was called with ", change, ": ",
                                     consequence, ". A graph replays the shapes it was captured with.");
      finding.fix =
          "Give the graphed callable the captured shapes: drop the last incomplete batch (DataLoader(drop_last=True)) "
          "or pad it to the captured size; or graph each shape separately (make_graphed_callables per size, all "
          "sharing one memory pool: pool=torch.cuda.graph_pool_handle()) and pick the graphed callable by size.";
      findings->push_back(std::move(finding));
    }
  }

  void ReportVariedDimension(const EngineRun& run, std::vector<Finding>* findings) const {
    const ShapeVariation& variation = *run.shape_variation;
    std::vector<int64_t> sizes = {variation.captured_size};
    for (const ShapeVariant& v : variation.variants) {
      if (std::find(sizes.begin(), sizes.end(), v.size) == sizes.end()) sizes.push_back(v.size);
    }
    if (sizes.size() < 2) return;
    std::sort(sizes.begin(), sizes.end());
    uint64_t pool_bytes = 0, captured = 0;
    Finding finding = NewFinding();
    for (const ShapeVariant& v : variation.variants) {
      if (v.captured) {
        ++captured;
        pool_bytes += v.pool_bytes;
        finding.evidence.push_back(absl::StrFormat("size %d: graphs of %s, %.1f MiB of pool memory", v.size,
                                                   Plural(v.graph_nodes, "node", "nodes"), v.pool_bytes / 1048576.0));
      } else {
        finding.evidence.push_back(
            absl::StrCat("size ", v.size, ": ", v.eager_ran ? "capture" : "the eager step", " failed: ", v.error));
      }
    }
    finding.message = absl::StrFormat(
        "Input %s's dimension %d takes %d sizes (%s), but a CUDA graph replays the shapes it captured (%d): each size "
        "needs graphs of its own. The engine captured them for %d of the sizes it was given: %.1f MiB of pool "
        "memory in all.",
        variation.input, variation.dim, sizes.size(), absl::StrJoin(sizes, ", "), variation.captured_size, captured,
        pool_bytes / 1048576.0);
    finding.fix = absl::StrFormat(
        "Bucket dimension %d of %s: pad each batch up to one of a few sizes (here %s, or powers of two), capture one "
        "set of graphs per bucket into one shared memory pool (torch.cuda.graph(g, pool=...), make_graphed_callables "
        "with a common pool), and pick the graphs by size at run time; or keep that part of the step eager.",
        variation.dim, variation.input, absl::StrJoin(sizes, ", "));
    findings->push_back(std::move(finding));
  }

  // Kernels and copies of the steps whose sizes differ from step to step.
  void ReportVaryingLaunches(const TraceAnalysis& analysis, const BoundOptions& options,
                             std::vector<Finding>* findings) const {
    // Under torch.compile's cudagraph trees the framework decides what to graph, and its recording steps differ
    // from its replaying ones by design; recapture-churn names the compiled functions that re-record.
    if (analysis.probe().cudagraph_trees()) return;
    const trace::Trace& trace = analysis.trace();
    const Iterations& iterations = analysis.steps();
    const std::vector<Iteration> steps = LaunchRecorded(iterations.eager);
    if (steps.size() < 2) return;
    const StepSignatures signatures = SignSteps(trace, steps);
    const std::vector<uint64_t>& sequences = signatures.sequences;
    const std::vector<uint64_t>& shapes = signatures.shapes;
    const uint64_t common_sequence = sequences[MostCommonStep(sequences, signatures.all)];
    std::vector<size_t> same_sequence;
    for (size_t s : signatures.all) {
      if (sequences[s] == common_sequence) same_sequence.push_back(s);
    }
    const size_t reference = MostCommonStep(shapes, same_sequence);
    std::vector<size_t> differing;
    absl::flat_hash_set<uint64_t> distinct;
    for (size_t s : same_sequence) {
      distinct.insert(shapes[s]);
      if (shapes[s] != shapes[reference]) differing.push_back(s);
    }
    if (differing.empty() || !TrustedSteps(iterations, steps.size(), same_sequence.size())) return;

    const std::vector<size_t> ref_ops = StepOperations(trace, steps[reference]);
    const std::vector<size_t> odd_ops = StepOperations(trace, steps[differing.front()]);
    const size_t k = FirstDifference(trace, ref_ops, odd_ops, &SameShape);
    if (k == ref_ops.size() || k == odd_ops.size()) return;  // a hash collision: the sequences are identical
    const trace::ApiCall& ref = trace.api_calls[ref_ops[k]];
    const trace::ApiCall& odd = trace.api_calls[odd_ops[k]];
    Finding finding = NewFinding();
    finding.where = analysis.Locate(odd_ops[k]);
    finding.message = absl::StrCat("Launch sizes change between steps: step ", steps[differing.front()].index, " runs ",
                                   DescribeOperation(trace, odd, true), " where step ", steps[reference].index, " ran ",
                                   DescribeOperation(trace, ref, true), OperatorClause(finding.where),
                                   ". A graph would replay the captured sizes.");
    finding.evidence.push_back(absl::StrCat(differing.size(), " of ", same_sequence.size(),
                                            " steps with the same "
                                            "kernels differ in sizes; ",
                                            distinct.size(), " distinct size sets"));
    finding.evidence.push_back(absl::StrCat("steps from ", iterations.source));
    NoteWhenAnotherPhase(iterations, &finding);
    finding.fix =
        "Give the graphed region static shapes: pad or bucket variable dimensions (batch, sequence length) to a few "
        "sizes and capture one graph per bucket, drop the last incomplete batch (DataLoader(drop_last=True)), and "
        "copy inputs into preallocated static tensors.";
    findings->push_back(std::move(finding));
  }
};

}  // namespace

std::unique_ptr<Check> NewDynamicShapeCheck() { return std::make_unique<DynamicShapeCheck>(); }

}  // namespace graphcheck::checks
