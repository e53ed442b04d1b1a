// rng-frozen-mask: outputs that change with every random draw in eager stay the same from one replay to the next. The
// randomness comes from the host (a CPU generator, Python's random, a number drawn per call and passed to a kernel),
// which a graph records once at capture: every replay applies the capture-time mask, shift or noise.
#ifndef GRAPHCHECK_VALIDATORS_RNG_RNG_FROZEN_MASK_H_
#define GRAPHCHECK_VALIDATORS_RNG_RNG_FROZEN_MASK_H_

#include "core/check.h"

namespace graphcheck {

// Two producers: `graphcheck check`'s engine (RngDraws: two eager calls and two replays on the same input), and in
// a running program the Python probe under `graphcheck run --shadow N`, whose comparisons name the random sources
// the eager run drew from: a graphed call or replay that differs from its eager code where that code drew on the host
// (the CPU generator, Python's random, numpy) is a draw the capture froze.
class RngFrozenMaskCheck : public Check {
 public:
  const CheckInfo& info() const override;
  // An engine run, or a trace holding --shadow's comparisons.
  bool CanRun(const CheckInputs& inputs) const override;
  void Run(const CheckInputs& inputs, const BoundOptions& options, std::vector<Finding>* findings) const override;

 private:
  void CheckEngineRun(const EngineRun& run, std::vector<Finding>* findings) const;
  void CheckShadowComparisons(const trace::Trace& trace, const BoundOptions& options,
                              std::vector<Finding>* findings) const;
};

}  // namespace graphcheck

#endif  // GRAPHCHECK_VALIDATORS_RNG_RNG_FROZEN_MASK_H_
