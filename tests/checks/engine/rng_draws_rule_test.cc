// The RNG validators' rule on constructed RngDraws: which runs depend on random draws, and whether the replays draw as
// eager does, froze their draws, or draw others; eager's own noise (nondeterministic kernels, per-call host state that
// a seed does not bring back) is not taken for random draws. numerics-forward leaves outputs the rule explains to the
// RNG checks.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "checks/checks.h"
#include "checks/engine/rng_draws_rule.h"
#include "tests/checks/engine/rng_test_util.h"

namespace graphcheck::checks {
namespace {

using testing_util::kDrawsOnlyInEager;
using testing_util::kDropoutAsEager;
using testing_util::kHostShiftFrozen;
using testing_util::Losses;
using testing_util::RunEngineCheck;
using testing_util::Sample;
using testing_util::WithDraws;

TEST(RngDrawsRuleTest, Verdicts) {
  EXPECT_EQ(JudgeRngDraws(Losses({1}, {1})), RngDrawVerdict::kNotMeasured);
  EXPECT_EQ(JudgeRngDraws(WithDraws({0, 0, 0, 0, 3, 0, 0})), RngDrawVerdict::kNoRandomness);
  EXPECT_EQ(JudgeRngDraws(WithDraws(kDropoutAsEager)), RngDrawVerdict::kAsEager);
  EXPECT_EQ(JudgeRngDraws(WithDraws(kHostShiftFrozen)), RngDrawVerdict::kFrozen);
  EXPECT_EQ(JudgeRngDraws(WithDraws(kDrawsOnlyInEager)), RngDrawVerdict::kMismatch);
  // Per-call host state that a seed does not bring back (a Python counter): eager differs after the same seed as much
  // as between two calls, so the outputs' changes are not random draws.
  EXPECT_EQ(JudgeRngDraws(WithDraws({0.01, 0.02, 0, 0.01, 3, 0, 0})), RngDrawVerdict::kNoRandomness);
  // Nondeterministic kernels (--numerics native): replays that differ only by eager's own noise are frozen draws, and
  // a first replay within that noise of eager draws as eager does.
  EXPECT_EQ(JudgeRngDraws(WithDraws({2.5, 1e-6, 1e-6, 0, 3, 4, 4})), RngDrawVerdict::kFrozen);
  EXPECT_EQ(JudgeRngDraws(WithDraws({2.5, 1e-6, 2.5, 2e-6, 3, 4, 4})), RngDrawVerdict::kAsEager);
  // Outputs that differ from eager while the generator advances as in eager: not the draws (numerics-forward's).
  EXPECT_EQ(JudgeRngDraws(WithDraws({2.5, 0, 2.5, 0.5, 3, 4, 4})), RngDrawVerdict::kAsEager);
}

TEST(RngDrawsRuleTest, NumericsForwardLeavesRandomDrawsToTheRngChecks) {
  for (const RngDraws& draws : {kHostShiftFrozen, kDrawsOnlyInEager}) {
    EngineRun run = WithDraws(draws);
    run.samples = {Sample("output 0", TensorRole::kOutput, 1.5, 0, 3)};
    EXPECT_THAT(RunEngineCheck(*NewNumericsForwardCheck(), run), ::testing::IsEmpty());
  }
  EngineRun run = WithDraws(kDropoutAsEager);
  run.samples = {Sample("output 0", TensorRole::kOutput, 1.5, 0, 3)};
  EXPECT_EQ(RunEngineCheck(*NewNumericsForwardCheck(), run).size(), 1u);
}

}  // namespace
}  // namespace graphcheck::checks
