// rng-eager-mismatch: the replays draw new random numbers, but not the ones eager draws after the same seed: a forward
// replay advances the default CUDA generator by another amount than an eager forward (code that draws only when not
// capturing, or draws at capture that replays do not repeat), so dropout masks and noise differ from eager's.
#ifndef GRAPHCHECK_VALIDATORS_RNG_RNG_EAGER_MISMATCH_H_
#define GRAPHCHECK_VALIDATORS_RNG_RNG_EAGER_MISMATCH_H_

#include "core/check.h"

namespace graphcheck {

class RngEagerMismatchCheck : public EngineCheck {
 public:
  const CheckInfo& info() const override;

 protected:
  void CheckEngineRun(const EngineRun& run, const BoundOptions& options, std::vector<Finding>* findings) const override;
};

}  // namespace graphcheck

#endif  // GRAPHCHECK_VALIDATORS_RNG_RNG_EAGER_MISMATCH_H_
