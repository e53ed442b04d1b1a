#include "checks/engine/rng_draws_rule.h"

namespace graphcheck::checks {
namespace {

// Dropout changes outputs by their own magnitude; nondeterministic kernels by a few ulps of it. Four times eager's
// reseeded difference separates the two by orders of magnitude either way.
constexpr double kNoiseFactor = 4;

}  // namespace

RngDrawVerdict JudgeRngDraws(const EngineRun& run) {
  if (!run.rng_draws) return RngDrawVerdict::kNotMeasured;
  const RngDraws& d = *run.rng_draws;
  const double noise = kNoiseFactor * d.eager_reseeded;
  if (!(d.eager_redraw > noise)) return RngDrawVerdict::kNoRandomness;
  if (d.graphed_redraw <= noise) return RngDrawVerdict::kFrozen;
  if (d.graphed_vs_eager > noise && d.graphed_offset != d.eager_offset) return RngDrawVerdict::kMismatch;
  return RngDrawVerdict::kAsEager;
}

}  // namespace graphcheck::checks
