// Constructed engine runs for the RNG validators' tests: RngDraws of a dropout model whose replays draw as eager does,
// of host-drawn randomness that the graph froze, and of code that draws only when not capturing.
#ifndef GRAPHCHECK_TESTS_CHECKS_ENGINE_RNG_TEST_UTIL_H_
#define GRAPHCHECK_TESTS_CHECKS_ENGINE_RNG_TEST_UTIL_H_

#include "engine/run/engine_run.h"
#include "tests/checks/engine/numerics_test_util.h"

namespace graphcheck {
namespace testing_util {

inline EngineRun WithDraws(RngDraws draws) {
  EngineRun run = Losses({1.0, 0.9}, {1.0, 0.9}, {1.0, 0.9});
  run.rng_draws = draws;
  return run;
}

// eager_redraw, eager_reseeded, graphed_redraw, graphed_vs_eager, output_abs_max, eager_offset, graphed_offset
inline constexpr RngDraws kDropoutAsEager{2.5, 0, 2.5, 0, 3, 4, 4};
inline constexpr RngDraws kHostShiftFrozen{2.5, 0, 0, 1.5, 3, 0, 0};
inline constexpr RngDraws kDrawsOnlyInEager{2.5, 0, 2.5, 2.0, 3, 8, 4};

}  // namespace testing_util
}  // namespace graphcheck

#endif  // GRAPHCHECK_TESTS_CHECKS_ENGINE_RNG_TEST_UTIL_H_
