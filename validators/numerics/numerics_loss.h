// numerics-loss: graphed training does not follow eager training. The engine runs the same steps from the same
// parameters, optimizer state, inputs and random seed, eagerly (twice) and through the graphs; the losses are compared
// by the numerics rule (validators/numerics/numerics_rule.h). It reports what the per-tensor checks cannot see: when a
// sampled output, gradient or state tensor already differs (numerics-forward, numerics-grad, state-elided) or turned
// non-finite (numerics-nonfinite), that finding names the cause and this one stays silent.
#ifndef GRAPHCHECK_VALIDATORS_NUMERICS_NUMERICS_LOSS_H_
#define GRAPHCHECK_VALIDATORS_NUMERICS_NUMERICS_LOSS_H_

#include "core/check.h"

namespace graphcheck {

class NumericsLossCheck : public EngineCheck {
 public:
  const CheckInfo& info() const override;

 protected:
  void CheckEngineRun(const EngineRun& run, const BoundOptions& options, std::vector<Finding>* findings) const override;
};

}  // namespace graphcheck

#endif  // GRAPHCHECK_VALIDATORS_NUMERICS_NUMERICS_LOSS_H_
