// pipeline-step-failed: a step of `graphcheck check`'s pipeline failed (the eager reference, the warmup, a capture, a
// replay), so the model cannot be graphed as it is. Other checks usually name the cause (sync-in-capture,
// pageable-memcpy, ...); this one makes sure a failure is never silent, whatever caused it.
#ifndef GRAPHCHECK_VALIDATORS_ENGINE_PIPELINE_STEP_FAILED_H_
#define GRAPHCHECK_VALIDATORS_ENGINE_PIPELINE_STEP_FAILED_H_

#include "core/check.h"

namespace graphcheck {

class PipelineStepFailedCheck : public EngineCheck {
 public:
  const CheckInfo& info() const override;

 protected:
  void CheckEngineRun(const EngineRun& run, const BoundOptions& options, std::vector<Finding>* findings) const override;
};

}  // namespace graphcheck

#endif  // GRAPHCHECK_VALIDATORS_ENGINE_PIPELINE_STEP_FAILED_H_
