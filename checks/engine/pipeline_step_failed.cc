// pipeline-step-failed: a step of `graphcheck check`'s pipeline failed (the eager reference, the warmup, a capture, a
// replay), so the model cannot be graphed as it is. Other checks usually name the cause (sync-in-capture,
// pageable-memcpy, ...); this one makes sure a failure is never silent, whatever caused it.
#include <memory>

#include "absl/strings/str_cat.h"
#include "checks/checks.h"
#include "core/check.h"
#include "core/check_ids.h"
#include "engine/run/engine_run.h"

namespace graphcheck::checks {
namespace {

class PipelineStepFailedCheck : public CheckOf<EngineRun> {
 public:
  PipelineStepFailedCheck();

 protected:
  void Read(const EngineRun& run, const BoundOptions& options, std::vector<Finding>* findings) const override;
};

}  // namespace
namespace {

// What to do depends on where the pipeline stopped.
std::string FixFor(const std::string& step) {
  if (step == "eager-reference" || step == "load-model") {
    return "The model does not run eagerly with these inputs: check the --input shapes and dtypes against what its "
           "forward expects.";
  }
  if (step == "warmup") {
    return "The warmup (eager steps on a side stream) failed: the model does not support running off the default "
           "stream, or make_graphed_callables' rules reject it (see the message).";
  }
  return "Fix the cause the capture checks report for this step (each names the call, the operator and the fix), "
         "then run graphcheck check again.";
}

}  // namespace

PipelineStepFailedCheck::PipelineStepFailedCheck()
    : CheckOf(CheckInfo{check_id::kPipelineStepFailed,
                        "A step of the check pipeline failed",
                        Severity::kError,
                        CheckArea::kCapture,
                        "graphcheck check stopped at a step (eager reference, warmup, capture or replay): the model "
                        "cannot be graphed "
                        "as it is. The step's error is quoted; the other findings name its cause.",
                        {}}) {}

void PipelineStepFailedCheck::Read(const EngineRun& run, const BoundOptions& options,
                                   std::vector<Finding>* findings) const {
  for (const Step& step : run.steps) {
    if (step.status != StepStatus::kFailed) continue;
    Finding finding = NewFinding();
    finding.message = absl::StrCat("The ", step.name, " step of ", run.model, " failed: ", step.message);
    finding.where.key = run.model;
    finding.where.nvtx_path = absl::StrCat("graphcheck:", step.name);
    finding.evidence = {absl::StrCat("scope ", run.scope, ", ", run.compute_dtype), "the steps after it were skipped"};
    finding.fix = FixFor(step.name);
    findings->push_back(std::move(finding));
  }
}

std::unique_ptr<Check> NewPipelineStepFailedCheck() { return std::make_unique<PipelineStepFailedCheck>(); }

}  // namespace graphcheck::checks
