// state-elided: a buffer or parameter that ends the graphed run differently from eager, while the first step's
// outputs and gradients agree, is flagged (and named frozen when replays never changed it); clean state and state
// that differs because the forward already does are not.
#include "checks/checks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/checks/engine/numerics_test_util.h"

namespace graphcheck::checks {
namespace {

using ::testing::HasSubstr;
using testing_util::Losses;
using testing_util::Sample;

std::vector<Finding> Check(const EngineRun& run) { return testing_util::RunEngineCheck(*NewStateElidedCheck(), run); }

TEST(StateElidedTest, FlagsABufferTheReplaysNeverUpdate) {
  // A step counter rebound in forward (`self.steps = self.steps + 1`): eager counts, the replays do not.
  EngineRun run = Losses({1.0, 0.9}, {1.0, 0.9}, {1.0, 0.9});
  NumericsSample steps = Sample("steps", TensorRole::kBuffer, 20, 0, 20);
  steps.changed_in_eager = true;
  steps.changed_in_graphed = false;
  run.samples = {Sample("output 0", TensorRole::kOutput, 0), Sample("0.weight", TensorRole::kGradient, 0),
                 Sample("0.weight", TensorRole::kParameter, 0), steps};
  const auto findings = Check(run);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].check_id, "state-elided");
  EXPECT_EQ(findings[0].severity, Severity::kError);
  EXPECT_THAT(findings[0].message, HasSubstr("the worst is buffer steps, which eager steps change and graph "
                                             "replays never do"));
  EXPECT_THAT(findings[0].evidence.back(),
              HasSubstr("changed during eager steps and kept at their initial value through the replays: 1 of them"));
  EXPECT_THAT(findings[0].fix, HasSubstr("in place"));
}

// With nondeterministic kernels eager does not reproduce itself, and steps amplify that noise: a parameter further from
// eager than the repeat's spread allows is no evidence then; a buffer the replays never changed still is.
TEST(StateElidedTest, WithoutABitwiseEagerOnlyStateTheReplaysNeverChangeCounts) {
  EngineRun run = Losses({1.0, 0.9}, {1.0, 0.91}, {1.0, 0.93});
  run.deterministic_settings = false;
  NumericsSample weight = Sample("layer1.0.bn1.bias", TensorRole::kParameter, 0.3, 0.01, 1);
  weight.changed_in_eager = weight.changed_in_graphed = true;
  run.samples = {Sample("output 0", TensorRole::kOutput, 0), weight};
  EXPECT_TRUE(Check(run).empty());
  NumericsSample steps = Sample("steps", TensorRole::kBuffer, 20, 0, 20);
  steps.changed_in_eager = true;
  run.samples.push_back(steps);
  const auto findings = Check(run);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_THAT(findings[0].message, HasSubstr("ends with other values than the eager run in 1 parameter or buffer,"));
  EXPECT_THAT(findings[0].message, HasSubstr("the worst is buffer steps"));
}

TEST(StateElidedTest, CleanWhenStateAgrees) {
  EngineRun run = Losses({1.0}, {1.0}, {1.0});
  NumericsSample mean = Sample("1.running_mean", TensorRole::kBuffer, 0);
  mean.changed_in_eager = mean.changed_in_graphed = true;
  run.samples = {Sample("output 0", TensorRole::kOutput, 0), mean};
  EXPECT_TRUE(Check(run).empty());
}

TEST(StateElidedTest, SilentWhenOutputsOrGradientsAlreadyDiffer) {
  EngineRun run = Losses({1.0}, {1.0}, {1.0});
  run.samples = {Sample("0.weight", TensorRole::kGradient, 0.5), Sample("0.weight", TensorRole::kParameter, 0.5)};
  EXPECT_TRUE(Check(run).empty());
}

}  // namespace
}  // namespace graphcheck::checks
