// state-elided: after the same steps, a parameter or buffer holds a different value in the graphed run than in the
// eager run although the first step's outputs and gradients agree: state that the eager code changes outside what the
// graph recorded (a buffer rebound in forward, a counter or CPU scalar copied into the graph once, a running
// statistic updated in Python). Where outputs or gradients already differ, numerics-forward or numerics-grad names
// the cause and this check stays silent.
#ifndef GRAPHCHECK_VALIDATORS_STATE_STATE_ELIDED_H_
#define GRAPHCHECK_VALIDATORS_STATE_STATE_ELIDED_H_

#include "core/check.h"

namespace graphcheck {

class StateElidedCheck : public EngineCheck {
 public:
  const CheckInfo& info() const override;

 protected:
  void CheckEngineRun(const EngineRun& run, const BoundOptions& options, std::vector<Finding>* findings) const override;
};

}  // namespace graphcheck

#endif  // GRAPHCHECK_VALIDATORS_STATE_STATE_ELIDED_H_
