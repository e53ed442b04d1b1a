// dynamic-control-flow: the steps do not all launch the same operations: a branch on data (a Python `if` on a tensor
// value, an early exit, MoE routing) changes the kernel sequence. A graph freezes one sequence, so replay would run
// the captured branch every time. Compares each step's sequence with the most common one and points at the first
// operation where the first differing step departs from it. In a program that also replays graphs in steps, the eager
// steps are another phase (a reference run, an evaluation loop, set-up the repetition took for steps): a note.
#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "analysis/step_signatures.h"
#include "checks/checks.h"
#include "checks/trace/internal/capture_problem_check.h"
#include "checks/trace/internal/eager_phase.h"
#include "core/check_ids.h"
#include "core/plural.h"

namespace graphcheck::checks {

using analysis::CaptureWindow;
using analysis::DescribeOperation;
using analysis::FirstDifference;
using analysis::Iteration;
using analysis::Iterations;
using analysis::LaunchRecorded;
using analysis::MostCommonStep;
using analysis::SameOperation;
using analysis::SignSteps;
using analysis::StepOperations;
using analysis::StepSignatures;
using analysis::TraceAnalysis;
using analysis::TrustedSteps;

namespace {

class DynamicControlFlowCheck : public CheckOf<TraceAnalysis> {
 public:
  DynamicControlFlowCheck()
      : CheckOf(CheckInfo{
            check_id::kDynamicControlFlow,
            "The kernel sequence changes between steps",
            Severity::kWarning,
            CheckArea::kEagerRegion,
            "Steps of the region to graph launch different kernels: control flow depends on data. A CUDA graph replays "
            "the sequence it captured, whatever the data says.",
            {}}) {}

 private:
  // One-time work does not make a step differ: one of the first two steps running the common sequence with operations
  // added, in a sequence no other step has (the first optimizer step initialising its state, a lazily built module, a
  // cache filled once; seen on an H100: Adam's FillFunctor<long> in its first step), or the first step after a capture
  // ends (the capture's warmup left work behind). Later one-off extras are data-dependent branches, and reported.
  static bool OneTimeWork(const TraceAnalysis& analysis, const std::vector<Iteration>& steps, size_t step,
                          const std::vector<uint64_t>& sequences, const std::vector<size_t>& ref_ops) {
    const trace::Trace& trace = analysis.trace();
    if (FirstStepAfterCapture(analysis, steps, step)) return true;
    if (step > 1 || std::count(sequences.begin(), sequences.end(), sequences[step]) != 1) return false;
    const std::vector<size_t> ops = StepOperations(trace, steps[step]);
    size_t matched = 0;
    for (size_t i = 0; i < ops.size() && matched < ref_ops.size(); ++i) {
      if (SameOperation(trace, trace.api_calls[ops[i]], trace.api_calls[ref_ops[matched]])) ++matched;
    }
    return matched == ref_ops.size() && ops.size() > ref_ops.size();
  }

  static bool FirstStepAfterCapture(const TraceAnalysis& analysis, const std::vector<Iteration>& steps, size_t step) {
    const trace::Trace& trace = analysis.trace();
    for (const CaptureWindow& window : analysis.captures().windows()) {
      if (!window.end_call) continue;
      const uint64_t ended = trace.api_calls[*window.end_call].end_ns;
      const bool previous_before = step == 0 || steps[step - 1].start_ns < ended;
      if (steps[step].start_ns >= ended && previous_before) return true;
    }
    return false;
  }

 protected:
  void Read(const TraceAnalysis& analysis, const BoundOptions& options, std::vector<Finding>* findings) const override {
    // Under torch.compile's cudagraph trees the framework decides what to graph, and its recording steps differ
    // from its replaying ones by design; recapture-churn names the compiled functions that re-record.
    if (analysis.probe().cudagraph_trees()) return;
    const trace::Trace& trace = analysis.trace();
    const Iterations& iterations = analysis.steps();
    const std::vector<Iteration> steps = LaunchRecorded(iterations.eager);
    if (steps.size() < 2) return;
    const StepSignatures signatures = SignSteps(trace, steps);
    const std::vector<uint64_t>& sequences = signatures.sequences;
    const size_t reference = MostCommonStep(sequences, signatures.all);
    const std::vector<size_t> ref_ops = StepOperations(trace, steps[reference]);
    std::vector<size_t> differing;
    for (size_t s : signatures.all) {
      if (sequences[s] != sequences[reference] && !OneTimeWork(analysis, steps, s, sequences, ref_ops)) {
        differing.push_back(s);
      }
    }
    if (differing.empty() || !TrustedSteps(iterations, steps.size(), steps.size() - differing.size())) return;
    const absl::flat_hash_set<uint64_t> distinct(sequences.begin(), sequences.end());

    // Where the first differing step departs from the reference.
    const std::vector<size_t> odd_ops = StepOperations(trace, steps[differing.front()]);
    const size_t k = FirstDifference(trace, ref_ops, odd_ops, &SameOperation);
    const size_t ref_step = steps[reference].index;
    const size_t odd_step = steps[differing.front()].index;
    Finding finding = NewFinding();
    std::string what;
    if (k < odd_ops.size()) {
      finding.where = analysis.Locate(odd_ops[k]);
      what =
          absl::StrCat("step ", odd_step, " launches ", DescribeOperation(trace, trace.api_calls[odd_ops[k]], false),
                       k < ref_ops.size()
                           ? absl::StrCat(" where step ", ref_step, " launched ",
                                          DescribeOperation(trace, trace.api_calls[ref_ops[k]], false))
                           : absl::StrCat(" after the ", Plural(k, "operation", "operations"), " of step ", ref_step));
    } else {
      finding.where = analysis.Locate(ref_ops[k]);
      what = absl::StrCat("step ", odd_step, " stops after ", Plural(k, "operation", "operations"), " where step ",
                          ref_step, " goes on with ", DescribeOperation(trace, trace.api_calls[ref_ops[k]], false));
    }
    finding.message = absl::StrCat("The kernel sequence changes between steps: ", what, " (operation ", k + 1,
                                   "). A graph would replay one branch every time.");
    finding.evidence.push_back(absl::StrCat(differing.size(), " of ", steps.size(),
                                            " steps differ from the most "
                                            "common sequence; ",
                                            distinct.size(), " distinct sequences"));
    finding.evidence.push_back(absl::StrCat("steps from ", iterations.source));
    NoteWhenAnotherPhase(iterations, &finding);
    finding.fix =
        "Make the step's control flow independent of data: compute both branches and select with torch.where or a "
        "mask, move data-dependent decisions outside the graphed region (partial capture), or capture one graph "
        "per branch and choose between them on the host from values you already have there.";
    findings->push_back(std::move(finding));
  }
};

}  // namespace

std::unique_ptr<Check> NewDynamicControlFlowCheck() { return std::make_unique<DynamicControlFlowCheck>(); }

}  // namespace graphcheck::checks
