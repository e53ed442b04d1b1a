// rng-frozen-mask and rng-eager-mismatch on constructed RngDraws: replays that repeat their capture-time draws, and
// replays that draw other numbers than eager from the same seed, are flagged; a dropout model whose replays draw as
// eager does, a model without randomness, per-call host state that a seed does not reproduce, and a run without the
// measurement are not. numerics-forward leaves the outputs to the RNG check that explains them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/validators/numerics_test_util.h"
#include "validators/numerics/numerics_forward.h"
#include "validators/rng/rng_draws_rule.h"
#include "validators/rng/rng_eager_mismatch.h"
#include "validators/rng/rng_frozen_mask.h"

namespace graphcheck {
namespace {

using ::testing::HasSubstr;
using testing_util::Losses;
using testing_util::RunEngineCheck;
using testing_util::Sample;

EngineRun WithDraws(RngDraws draws) {
  EngineRun run = Losses({1.0, 0.9}, {1.0, 0.9}, {1.0, 0.9});
  run.rng_draws = draws;
  return run;
}

// eager_redraw, eager_reseeded, graphed_redraw, graphed_vs_eager, output_abs_max, eager_offset, graphed_offset
const RngDraws kDropoutAsEager{2.5, 0, 2.5, 0, 3, 4, 4};
const RngDraws kHostShiftFrozen{2.5, 0, 0, 1.5, 3, 0, 0};
const RngDraws kDrawsOnlyInEager{2.5, 0, 2.5, 2.0, 3, 8, 4};

TEST(RngDrawsTest, Verdicts) {
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

TEST(RngFrozenMaskTest, FlagsReplaysThatRepeatTheirDraws) {
  const std::vector<Finding> findings = RunEngineCheck<RngFrozenMaskCheck>(WithDraws(kHostShiftFrozen));
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].check_id, "rng-frozen-mask");
  EXPECT_EQ(findings[0].severity, Severity::kError);
  EXPECT_THAT(findings[0].message, HasSubstr("two eager calls on the same input differ by up to 2.5"));
  EXPECT_THAT(findings[0].fix, HasSubstr("on the GPU"));
}

TEST(RngFrozenMaskTest, LeavesDrawsThatAdvanceAlone) {
  EXPECT_THAT(RunEngineCheck<RngFrozenMaskCheck>(WithDraws(kDropoutAsEager)), ::testing::IsEmpty());
  EXPECT_THAT(RunEngineCheck<RngFrozenMaskCheck>(WithDraws(kDrawsOnlyInEager)), ::testing::IsEmpty());
  EXPECT_THAT(RunEngineCheck<RngFrozenMaskCheck>(WithDraws({0, 0, 0, 0, 3, 0, 0})), ::testing::IsEmpty());
}

TEST(RngEagerMismatchTest, FlagsReplaysThatAdvanceTheGeneratorOtherwise) {
  const std::vector<Finding> findings = RunEngineCheck<RngEagerMismatchCheck>(WithDraws(kDrawsOnlyInEager));
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].check_id, "rng-eager-mismatch");
  EXPECT_THAT(findings[0].message, HasSubstr("advances the CUDA generator by 8, a replay by 4"));
}

TEST(RngEagerMismatchTest, LeavesReplaysThatDrawAsEagerAlone) {
  EXPECT_THAT(RunEngineCheck<RngEagerMismatchCheck>(WithDraws(kDropoutAsEager)), ::testing::IsEmpty());
  EXPECT_THAT(RunEngineCheck<RngEagerMismatchCheck>(WithDraws(kHostShiftFrozen)), ::testing::IsEmpty());
  EXPECT_THAT(RunEngineCheck<RngEagerMismatchCheck>(Losses({1}, {1})), ::testing::IsEmpty());
}

TEST(RngDrawsTest, NumericsForwardLeavesRandomDrawsToTheRngChecks) {
  for (const RngDraws& draws : {kHostShiftFrozen, kDrawsOnlyInEager}) {
    EngineRun run = WithDraws(draws);
    run.samples = {Sample("output 0", TensorRole::kOutput, 1.5, 0, 3)};
    EXPECT_THAT(RunEngineCheck<NumericsForwardCheck>(run), ::testing::IsEmpty());
  }
  EngineRun run = WithDraws(kDropoutAsEager);
  run.samples = {Sample("output 0", TensorRole::kOutput, 1.5, 0, 3)};
  EXPECT_EQ(RunEngineCheck<NumericsForwardCheck>(run).size(), 1u);
}

}  // namespace
}  // namespace graphcheck
