// numerics-loss: graphed training does not follow eager training. The engine runs the same steps twice from the same
// parameters, optimizer state, inputs and random seed, once eagerly and once through the graphs; the losses must
// agree within a dtype-aware tolerance. A mismatch means replays compute something else than eager steps: a host
// value frozen into the graph at capture, state the graph does not update, an unregistered generator.
#ifndef GRAPHCHECK_VALIDATORS_ENGINE_NUMERICS_LOSS_H_
#define GRAPHCHECK_VALIDATORS_ENGINE_NUMERICS_LOSS_H_

#include "core/check.h"

namespace graphcheck {

class NumericsLossCheck : public EngineCheck {
 public:
  const CheckInfo& info() const override;

 protected:
  void CheckEngineRun(const EngineRun& run, const BoundOptions& options, std::vector<Finding>* findings) const override;
};

}  // namespace graphcheck

#endif  // GRAPHCHECK_VALIDATORS_ENGINE_NUMERICS_LOSS_H_
