// Tests of the HTML report's plot data (analyzers/report_timeline.h) on traces recorded on a GPU machine.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "analyzers/report_timeline.h"
#include "analyzers/trace_analysis.h"
#include "trace/trace_reader.h"

namespace graphcheck::analyzers {
namespace {

trace::Trace Recorded(const std::string& name) {
  absl::StatusOr<trace::Trace> trace =
      trace::ReadTrace(std::string(GRAPHCHECK_SOURCE_DIR) + "/examples/traces/" + name + "/trace.gctrace");
  EXPECT_TRUE(trace.ok()) << trace.status();
  return *std::move(trace);
}

std::vector<std::string> Phases(const Timeline& timeline) {
  std::vector<std::string> phases;
  for (const RunStepTime& step : timeline.run) {
    if (phases.empty() || phases.back() != step.phase) phases.push_back(step.phase);
  }
  return phases;
}

TEST(ReportTimelineTest, EagerThenGraphedHasEveryPhaseAndBothSteps) {
  const trace::Trace trace = Recorded("eager_then_graphed");
  const TraceAnalysis analysis(trace);
  std::optional<Timeline> timeline = BuildTimeline(analysis, IterationOptions{});
  ASSERT_TRUE(timeline.has_value());
  // Step 0 is left out by the default step range (1:), so it is the warmup.
  EXPECT_THAT(Phases(*timeline), ::testing::ElementsAre("warmup", "eager", "capture", "graphed"));
  EXPECT_EQ(timeline->run.size(), 25u);  // 12 eager, 1 capture, 12 graphed
  ASSERT_TRUE(timeline->eager_step && timeline->graphed_step);
  EXPECT_EQ(timeline->eager_step->kernels.size(), 106u);
  EXPECT_EQ(timeline->eager_step->launches.size(), 106u);
  EXPECT_EQ(timeline->graphed_step->launches.size(), 2u);   // the input copy's kernel and the graph launch
  EXPECT_EQ(timeline->graphed_step->kernels.size(), 106u);  // the graph's kernels, matched by its launch
  for (const TimelineKernel& kernel : timeline->eager_step->kernels) {
    EXPECT_GE(kernel.start_us, 0);
    EXPECT_LE(kernel.start_us + kernel.duration_us, timeline->eager_step->duration_us + 1e-6);
  }
  uint64_t histogram = 0;
  for (const HistogramBucket& bucket : timeline->kernel_durations) {
    EXPECT_LT(bucket.lower_us, bucket.upper_us);
    histogram += bucket.count;
  }
  EXPECT_EQ(histogram, 106u * 11);  // every kernel of the 11 eager steps in the range
}

TEST(ReportTimelineTest, CapsAreCountedNotSilent) {
  const trace::Trace trace = Recorded("eager_then_graphed");
  const TraceAnalysis analysis(trace);
  TimelineLimits limits;
  limits.run_steps = 5;
  limits.kernels_per_step = 10;
  limits.launches_per_step = 4;
  std::optional<Timeline> timeline = BuildTimeline(analysis, IterationOptions{}, limits);
  ASSERT_TRUE(timeline.has_value());
  EXPECT_EQ(timeline->run.size(), 5u);
  EXPECT_EQ(timeline->dropped_run_steps, 20u);
  EXPECT_EQ(timeline->eager_step->kernels.size(), 10u);
  EXPECT_EQ(timeline->eager_step->dropped_kernels, 96u);
  EXPECT_EQ(timeline->eager_step->dropped_launches, 102u);
}

TEST(ReportTimelineTest, AFailedCaptureHasNoGraphedStep) {
  const trace::Trace trace = Recorded("capture_item");
  const TraceAnalysis analysis(trace);
  std::optional<Timeline> timeline = BuildTimeline(analysis, IterationOptions{});
  ASSERT_TRUE(timeline.has_value());
  EXPECT_FALSE(timeline->graphed_step.has_value());
  EXPECT_TRUE(timeline->eager_step.has_value());
}

}  // namespace
}  // namespace graphcheck::analyzers
