// rng-frozen-mask: outputs that change with every random draw in eager stay the same from one replay to the next. The
// randomness comes from the host (a CPU generator, Python's random, a number drawn per call and passed to a kernel),
// which a graph records once at capture: every replay applies the capture-time mask, shift or noise.
#ifndef GRAPHCHECK_VALIDATORS_RNG_RNG_FROZEN_MASK_H_
#define GRAPHCHECK_VALIDATORS_RNG_RNG_FROZEN_MASK_H_

#include "core/check.h"

namespace graphcheck {

class RngFrozenMaskCheck : public EngineCheck {
 public:
  const CheckInfo& info() const override;

 protected:
  void CheckEngineRun(const EngineRun& run, const BoundOptions& options, std::vector<Finding>* findings) const override;
};

}  // namespace graphcheck

#endif  // GRAPHCHECK_VALIDATORS_RNG_RNG_FROZEN_MASK_H_
