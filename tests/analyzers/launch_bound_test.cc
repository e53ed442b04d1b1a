#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "analyzers/checks.h"
#include "analyzers/launch_metrics.h"
#include "analyzers/trace_analysis.h"
#include "tests/analyzers/launch_test_util.h"

namespace graphcheck::testing_trace {
namespace {

using ::testing::HasSubstr;
using ::testing::SizeIs;

TEST(LaunchBoundTest, FlagsShortKernelsWithIdleGaps) {
  // 10 kernels of 1 us in a 100 us step: forecast 10 + 2.5 + 1 us.
  const std::vector<Finding> findings = RunCheck(analyzers::NewLaunchBoundCheck(), LaunchBoundTrace(1000));
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].severity, Severity::kNote);
  EXPECT_THAT(findings[0].message, HasSubstr("forecast at 13.5 us"));
  EXPECT_THAT(findings[0].message, HasSubstr("a saving of"));
}

TEST(LaunchBoundTest, FlagsALoopOfOneKernelWithoutStepMarkers) {
  // A C++ loop launching one 1 us kernel every 3 us, no NVTX: steps are groups of 32 launches.
  TraceBuilder b;
  EagerSteps(&b, 1000000, 200, 3000, {{"scale"}}, 5000, 1000);
  const std::vector<Finding> findings = RunCheck(analyzers::NewLaunchBoundCheck(), b.Build());
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].evidence, ::testing::Contains(HasSubstr("grouped by 32")));
  EXPECT_THAT(findings[0].evidence, ::testing::Contains(HasSubstr("32 kernels per step")));
}

TEST(LaunchBoundTest, GpuBoundStepIsClean) {
  // 10 kernels of 10 us back to back: the GPU is busy the whole step.
  EXPECT_THAT(RunCheck(analyzers::NewLaunchBoundCheck(), LaunchBoundTrace(10000)), SizeIs(0));
}

TEST(LaunchBoundTest, ThresholdIsAnOption) {
  CheckOptions options;
  options.Set("launch-bound", "min-savings", "0.9");
  EXPECT_THAT(RunCheck(analyzers::NewLaunchBoundCheck(), LaunchBoundTrace(1000), options), SizeIs(0));
}

// A short program (the shipped capture_item: two steps after the first, both first-call work): no forecast, and the
// finding says why.
TEST(LaunchBoundTest, TooFewStepsGiveNoForecastAndSaySo) {
  const trace::Trace trace = LaunchBoundTrace(1000, 0, 30000, /*eager=*/4);  // 3 whole steps, 2 after the first
  const std::vector<Finding> findings = RunCheck(analyzers::NewLaunchBoundCheck(), trace);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].severity, Severity::kNote);
  EXPECT_THAT(findings[0].message,
              HasSubstr("Only 2 eager step(s) were recorded after the first: too few to forecast"));
  const analyzers::TraceAnalysis analysis(trace);
  const analyzers::LaunchStats stats =
      analyzers::ComputeLaunchStats(analysis, analyzers::IterationOptions(), analyzers::LaunchModel());
  EXPECT_FALSE(stats.forecast);
  for (const Metric& m : analyzers::LaunchMetrics(stats)) EXPECT_FALSE(absl::StrContains(m.name, "forecast"));
}

}  // namespace
}  // namespace graphcheck::testing_trace
