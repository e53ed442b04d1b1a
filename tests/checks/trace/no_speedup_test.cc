#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "checks/checks.h"
#include "tests/checks/trace/launch_test_util.h"

namespace graphcheck::testing_trace {
namespace {

using ::testing::HasSubstr;
using ::testing::SizeIs;

// Graphs that gain nothing but lose nothing beyond noise (tv ResNet-18 under `check`, x1.04) are a note: a
// `--fail-on warning` gate must not fail a clean model.
TEST(NoSpeedupTest, GraphedStepsAsSlowAsEagerAreANote) {
  const std::vector<Finding> findings = RunCheck(checks::NewNoSpeedupCheck(), LaunchBoundTrace(1000, 8, 100000));
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].severity, Severity::kNote);
  EXPECT_THAT(findings[0].message, HasSubstr("speedup x1.00; within the steps' noise of 5%: graphs do not pay off"));
  EXPECT_THAT(findings[0].evidence[1], HasSubstr("eager median 100.0 us (min 100.0, max 100.0)"));
}

TEST(NoSpeedupTest, GraphedStepsSlowerBeyondNoiseAreAWarning) {
  const std::vector<Finding> findings = RunCheck(checks::NewNoSpeedupCheck(), LaunchBoundTrace(1000, 8, 130000));
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].severity, Severity::kWarning);
  EXPECT_THAT(findings[0].message, HasSubstr("slower beyond the steps' noise of 5%"));
}

// Four replays against one eager step gave "graphed 63.8 us against 43.6 us eager" on an H100: too little evidence.
// Fewer than min-steps (5) graphed steps, or eager ones, are not judged.
TEST(NoSpeedupTest, TooFewStepsOfEitherKindAreNotJudged) {
  EXPECT_THAT(RunCheck(checks::NewNoSpeedupCheck(), LaunchBoundTrace(1000, 6, 100000)), SizeIs(0));
  EXPECT_THAT(RunCheck(checks::NewNoSpeedupCheck(), LaunchBoundTrace(1000, 8, 100000, /*eager=*/4)), SizeIs(0));
}

TEST(NoSpeedupTest, FasterGraphedStepsAreClean) {
  EXPECT_THAT(RunCheck(checks::NewNoSpeedupCheck(), LaunchBoundTrace(1000, 6, 30000)), SizeIs(0));
}

// An eager loop of 0.1 us kernels and a graphed loop of 20 us replays are not one step run two ways (a program's
// evaluation or set-up loop beside its graphed training loop): not judged, however slow the graphed steps.
TEST(NoSpeedupTest, StepsDoingOtherWorkAreNotCompared) {
  EXPECT_THAT(RunCheck(checks::NewNoSpeedupCheck(), LaunchBoundTrace(100, 8, 130000)), SizeIs(0));
  CheckOptions wide;
  wide.Set("no-speedup", "max-work-ratio", "100");
  EXPECT_THAT(RunCheck(checks::NewNoSpeedupCheck(), LaunchBoundTrace(100, 8, 130000), wide), SizeIs(1));
}

// Microsecond kernels: the GPU is busy about as long either way, yet 10 eager kernels against replays that run 40 are
// not one step (seen on an H200: a torch.compile decode loop's first steps against its replays, x0.20).
TEST(NoSpeedupTest, StepsRunningOtherKernelCountsAreNotCompared) {
  EXPECT_THAT(RunCheck(checks::NewNoSpeedupCheck(), LaunchBoundTrace(1000, 8, 130000, 7, /*replayed_kernels=*/40)),
              SizeIs(0));
  EXPECT_THAT(RunCheck(checks::NewNoSpeedupCheck(), LaunchBoundTrace(1000, 8, 130000, 7, /*replayed_kernels=*/10)),
              SizeIs(1));
}

// As many kernels, as long on the GPU, but other kernels: an H200's torch.compile decode loop, whose first steps ran
// two fills and whose replays ran a fused Triton kernel and a GEMM, gave x0.22. A graph replays its eager step's
// kernels.
TEST(NoSpeedupTest, StepsRunningOtherKernelsAreNotCompared) {
  EXPECT_THAT(RunCheck(checks::NewNoSpeedupCheck(), LaunchBoundTrace(1000, 8, 130000, 7, 10, "triton_fused")),
              SizeIs(0));
  CheckOptions any;
  any.Set("no-speedup", "min-shared-kernels", "0");
  EXPECT_THAT(RunCheck(checks::NewNoSpeedupCheck(), LaunchBoundTrace(1000, 8, 130000, 7, 10, "triton_fused"), any),
              SizeIs(1));
}

TEST(NoSpeedupTest, NeedsBothEagerAndGraphedSteps) {
  EXPECT_THAT(RunCheck(checks::NewNoSpeedupCheck(), LaunchBoundTrace(1000)), SizeIs(0));
}

}  // namespace
}  // namespace graphcheck::testing_trace
