#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "analysis/launch_metrics.h"
#include "analysis/trace_analysis.h"
#include "checks/checks.h"
#include "tests/checks/trace/launch_test_util.h"

namespace graphcheck::testing_trace {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::SizeIs;

TEST(LaunchBoundTest, FlagsShortKernelsWithIdleGaps) {
  // 10 kernels of 1 us in a 100 us step: forecast 10 + 2.5 + 1 us.
  const std::vector<Finding> findings = RunCheck(checks::NewLaunchBoundCheck(), LaunchBoundTrace(1000));
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].severity, Severity::kNote);
  EXPECT_THAT(findings[0].message, HasSubstr("forecast at 13.5 us"));
  EXPECT_THAT(findings[0].message, HasSubstr("a saving of"));
}

// An 83 ms step that is DataLoader work, its launches within 40 us (seen on an H100: "a saving of 100%"): graphs remove
// launching, not the host's other work, so nothing is forecast to save.
// The steps the user named with --region: the finding says which range it speaks of (it read an option no check
// declares, and was always empty).
TEST(LaunchBoundTest, AFindingOnTheRegionTheUserNamedSaysTheRange) {
  analysis::AnalysisSettings settings;
  settings.steps.region = "step";
  const std::vector<Finding> findings = RunCheck(checks::NewLaunchBoundCheck(), SampledTrace(8, 8), settings);
  ASSERT_FALSE(findings.empty());
  EXPECT_EQ(findings[0].where.nvtx_path, "step");
}

TEST(LaunchBoundTest, HostWorkOutsideTheLaunchingIsNotSaved) {
  TraceBuilder b;
  for (int s = 0; s < 8; ++s) {
    const uint64_t t = 1000000 + s * 83000000ull;
    b.Push(t, 1, "step");
    for (int k = 0; k < 10; ++k) b.LaunchAndRun(t + 82900000 + k * 4000, 1, 7, "k" + std::to_string(k), 5000, 2000);
    b.Pop(t + 82999000, 1);
  }
  EXPECT_THAT(RunCheck(checks::NewLaunchBoundCheck(), b.Build()), SizeIs(0));
}

// A program that already replays graphs is not told what graphs would save from the warmup steps before its capture;
// a graphed step that still launches many kernels one by one is told about that remainder.
TEST(LaunchBoundTest, AGraphedProgramHearsOnlyAboutItsEagerRemainder) {
  TraceBuilder warmed;
  EagerSteps(&warmed, 1000000, 4, 100000, {{"embed"}, {"gemm"}, {"adam"}}, 5000, 1000);  // the recipe's warmup
  warmed.Begin(1500000, 1, 9);
  warmed.End(1510000, 1, 9, 3, 0, 3).graph_id = 1;
  for (int s = 0; s < 8; ++s) warmed.Replay(1600000 + s * 30000, 1, 7, 1, 2000, 20000);
  EXPECT_THAT(RunCheck(checks::NewLaunchBoundCheck(), warmed.Build()), SizeIs(0));
  TraceBuilder b;
  for (int s = 0; s < 8; ++s) {
    const uint64_t t = 1000000 + s * 100000;
    b.Push(t, 1, "step");
    b.Replay(t, 1, 7, 1, 2000, 20000);
    for (int k = 0; k < 20; ++k) b.LaunchAndRun(t + 30000 + k * 3000, 1, 7, "adam" + std::to_string(k), 3000, 1000);
    b.Pop(t + 99000, 1);
  }
  const std::vector<Finding> findings = RunCheck(checks::NewLaunchBoundCheck(), b.Build());
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].title, "Graphed steps still launch kernels one by one");
  EXPECT_THAT(findings[0].message, HasSubstr("still launches 20 kernels one by one: 20.0 us of its 99.0 us"));
}

TEST(LaunchBoundTest, FlagsALoopOfOneKernelWithoutStepMarkers) {
  // A C++ loop launching one 1 us kernel every 3 us, no NVTX: steps are groups of 32 launches.
  TraceBuilder b;
  EagerSteps(&b, 1000000, 200, 3000, {{"scale"}}, 5000, 1000);
  const std::vector<Finding> findings = RunCheck(checks::NewLaunchBoundCheck(), b.Build());
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].evidence, ::testing::Contains(HasSubstr("grouped by 32")));
  EXPECT_THAT(findings[0].evidence, ::testing::Contains(HasSubstr("32 kernels per step")));
}

TEST(LaunchBoundTest, GpuBoundStepIsClean) {
  // 10 kernels of 10 us back to back: the GPU is busy the whole step.
  EXPECT_THAT(RunCheck(checks::NewLaunchBoundCheck(), LaunchBoundTrace(10000)), SizeIs(0));
}

TEST(LaunchBoundTest, ThresholdIsAnOption) {
  CheckOptions options;
  options.Set("launch-bound", "min-savings", "0.9");
  EXPECT_THAT(RunCheck(checks::NewLaunchBoundCheck(), LaunchBoundTrace(1000), options), SizeIs(0));
}

// A short program (the shipped capture_item: two steps after the first, both first-call work): no forecast, and the
// finding says why.
TEST(LaunchBoundTest, TooFewStepsGiveNoForecastAndSaySo) {
  const trace::Trace trace = LaunchBoundTrace(1000, 0, 30000, /*eager=*/4);  // 3 whole steps, 2 after the first
  const std::vector<Finding> findings = RunCheck(checks::NewLaunchBoundCheck(), trace);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].severity, Severity::kNote);
  EXPECT_THAT(findings[0].message, HasSubstr("Only 2 eager steps were recorded after the first: too few to forecast"));
  const analysis::TraceAnalysis analysis(trace);
  const analysis::LaunchStats stats =
      analysis::ComputeLaunchStats(analysis, analysis::IterationOptions(), analysis::LaunchModel());
  EXPECT_FALSE(stats.forecast);
  for (const Metric& m : analysis::LaunchMetrics(stats)) EXPECT_FALSE(absl::StrContains(m.name, "forecast"));
  // One step after the first is one step, not "1 eager step(s) were" or "1 steps".
  const std::vector<Finding> one =
      RunCheck(checks::NewLaunchBoundCheck(), LaunchBoundTrace(1000, 0, 30000, /*eager=*/3));
  ASSERT_THAT(one, SizeIs(1));
  EXPECT_THAT(one[0].message, HasSubstr("Only 1 eager step was recorded after the first"));
  EXPECT_THAT(one[0].evidence, ElementsAre(HasSubstr("1 step from ")));
}

}  // namespace
}  // namespace graphcheck::testing_trace
