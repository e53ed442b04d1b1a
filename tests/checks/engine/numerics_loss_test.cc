// numerics-loss: bitwise where eager reproduces itself, else beyond eager's own spread (and the dtype floor);
// silent where a per-tensor check names the cause or the graphed loss is not finite (numerics-nonfinite's).
#include "checks/checks.h"

#include <cmath>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/checks/engine/numerics_test_util.h"

namespace graphcheck::checks {
namespace {

using ::testing::HasSubstr;
using testing_util::Losses;
using testing_util::Sample;

std::vector<Finding> Check(const EngineRun& run, const CheckOptions& options = {}) {
  return testing_util::RunEngineCheck(*NewNumericsLossCheck(), run, options);
}

TEST(NumericsLossTest, FlagsDivergingGraphedLosses) {
  // A host value frozen at capture: the graphed run drifts away from step 2 on; eager reproduces itself.
  const auto findings = Check(Losses({1.0, 0.9, 0.8, 0.7}, {1.0, 0.9, 0.85, 0.9}, {1.0, 0.9, 0.8, 0.7}));
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].check_id, "numerics-loss");
  EXPECT_EQ(findings[0].severity, Severity::kError);
  EXPECT_THAT(findings[0].message, HasSubstr("2 of 4"));
  EXPECT_THAT(findings[0].message, HasSubstr("first at step 2"));
  EXPECT_THAT(findings[0].message, HasSubstr("worst at step 3"));
  EXPECT_THAT(findings[0].evidence[1], HasSubstr("bitwise"));
  EXPECT_FALSE(findings[0].fix.empty());
}

TEST(NumericsLossTest, ReproducibleEagerDemandsBitwiseEquality) {
  // One ulp-sized difference is a finding when two eager runs were bitwise equal ...
  EXPECT_EQ(Check(Losses({1.0, 0.9}, {1.0, 0.9000001}, {1.0, 0.9})).size(), 1u);
  // ... and within the float32 floor when they were not, or when the engine did not ask for deterministic kernels.
  EXPECT_TRUE(Check(Losses({1.0, 0.9}, {1.0, 0.9000001}, {1.0, 0.90000005})).empty());
  EngineRun native = Losses({1.0, 0.9}, {1.0, 0.9000001}, {1.0, 0.9});
  native.deterministic_settings = false;
  EXPECT_TRUE(Check(native).empty());
}

TEST(NumericsLossTest, EagerSpreadWidensTheTolerance) {
  // The ResNet-18 case on the H100: two eager runs drift apart by up to 16%; graphed drifts by up to 21%. Eager's own
  // noise, not a defect.
  const EngineRun resnet =
      Losses({0.030, 0.028, 0.025, 0.0218}, {0.030, 0.0279, 0.0240, 0.0196}, {0.030, 0.0281, 0.0262, 0.0183});
  EXPECT_TRUE(Check(resnet).empty());
  // The same graphed drift where eager reproduces itself closely is a finding: the spread bounds what is noise.
  const EngineRun tight = Losses({0.030, 0.028, 0.025, 0.0218}, {0.030, 0.0279, 0.0240, 0.0196},
                                 {0.030, 0.02800001, 0.02500002, 0.02180003});
  EXPECT_EQ(Check(tight).size(), 1u);
}

TEST(NumericsLossTest, EveryStepIsAllowedTheRunsLargestSpread) {
  // Eager's runs agree for the first steps and drift later; graphed drifts earlier, as a second sample of the same
  // chaos may (the H100 ResNet-18 case): within 4 x the run's largest spread (0.05) it is noise, beyond it a finding.
  const EngineRun drift = Losses({1.0, 0.9, 0.8, 0.7}, {1.0, 0.95, 0.8, 0.7}, {1.0, 0.90000001, 0.81, 0.75});
  EXPECT_TRUE(Check(drift).empty());
  const EngineRun beyond = Losses({1.0, 0.9, 0.8, 0.7}, {1.0, 1.2, 0.8, 0.7}, {1.0, 0.90000001, 0.81, 0.75});
  const auto findings = Check(beyond);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_THAT(findings[0].message, HasSubstr("first at step 1"));
}

TEST(NumericsLossTest, ARepeatThatDiffersAtTheFirstStepIsNotNoise) {
  // builtin:defect/frozen-host-scalar: the forward scales by a per-call counter, so the repeat (whose counter went on)
  // differs from the first step on. Its spread must not excuse the graphed run's difference.
  const EngineRun run = Losses({1.0, 0.9, 0.8}, {1.45, 1.3, 1.2}, {1.21, 1.1, 0.95});
  const auto findings = Check(run);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_THAT(findings[0].message, HasSubstr("3 of 3"));
  EXPECT_THAT(findings[0].evidence[1], HasSubstr("differs from the eager run from the same state and input"));
}

TEST(NumericsLossTest, WithoutARepeatTheDtypeToleranceApplies) {
  EXPECT_TRUE(Check(Losses({1.0, 0.9, 0.8}, {1.0, 0.90000001, 0.80000002})).empty());
  // bf16 autocast gets a wider tolerance: 0.5% off is fine there, not in float32.
  EXPECT_TRUE(Check(Losses({1.0, 0.9}, {1.0, 0.9045}, {}, "bfloat16")).empty());
  EXPECT_EQ(Check(Losses({1.0, 0.9}, {1.0, 0.9045}, {}, "float32")).size(), 1u);
  const auto findings = Check(Losses({1.0, 0.9}, {1.0, 0.9045}));
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_THAT(findings[0].evidence[1], HasSubstr("no eager repeat ran"));
}

TEST(NumericsLossTest, LeavesNonFiniteAndDivergedStepsToOthers) {
  EXPECT_TRUE(Check(Losses({1.0, 0.9}, {1.0, std::nan("")}, {1.0, 0.9})).empty());  // numerics-nonfinite's
  EXPECT_TRUE(Check(Losses({1.0, INFINITY}, {1.0, 5.0})).empty());                  // eager diverged itself
  EXPECT_TRUE(Check(Losses({1.0, 0.9}, {})).empty());                               // no replay ran
}

TEST(NumericsLossTest, SilentWhenASampledTensorNamesTheCause) {
  EngineRun run = Losses({1.0, 0.9}, {1.2, 1.1}, {1.0, 0.9});
  ASSERT_EQ(Check(run).size(), 1u);
  run.samples = {Sample("output 0", TensorRole::kOutput, 0.2)};
  EXPECT_TRUE(Check(run).empty());
}

TEST(NumericsLossTest, ToleranceIsAnOption) {
  const EngineRun run = Losses({1.0, 0.9}, {1.0, 0.97});
  EXPECT_EQ(Check(run).size(), 1u);
  CheckOptions options;
  options.Set("numerics-loss", "rtol-float32", "0.1");
  EXPECT_TRUE(Check(run, options).empty());
}

}  // namespace
}  // namespace graphcheck::checks
