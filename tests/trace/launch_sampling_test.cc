#include "trace/launch_sampling.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace graphcheck::trace {
namespace {

TEST(LaunchSamplingTest, ParsesASchedule) {
  SamplingSchedule schedule;
  ASSERT_TRUE(ParseSamplingSchedule("0:200:1000", &schedule).ok());
  EXPECT_EQ(schedule.first_launches, 0u);
  EXPECT_EQ(schedule.window_ms, 200u);
  EXPECT_EQ(schedule.period_ms, 1000u);
  EXPECT_EQ(schedule.first_steps, 8u);
  EXPECT_EQ(schedule.ToString(), "0:200:1000:8");
  ASSERT_TRUE(ParseSamplingSchedule("20000:0:0:0", &schedule).ok());
  EXPECT_EQ(schedule.first_steps, 0u);
  EXPECT_EQ(schedule.ToString(), "20000:0:0:0");
}

TEST(LaunchSamplingTest, TheDefaultAndZeroZeroMeanNoWindowsAfterTheFirst) {
  EXPECT_EQ(SamplingSchedule().period_ms, 0u);
  SamplingSchedule schedule;
  ASSERT_TRUE(ParseSamplingSchedule("5000:0:0", &schedule).ok());
  EXPECT_EQ(schedule.first_launches, 5000u);
  EXPECT_EQ(schedule.period_ms, 0u);
  EXPECT_EQ(schedule.ToString(), "5000:0:0:8");
}

TEST(LaunchSamplingTest, RefusesImpossibleSchedulesAndKeepsTheOldOne) {
  SamplingSchedule schedule;
  for (const char* bad :
       {"", "1:2", "a:b:c", "0:0:1000", "0:200:0", "0:2000:1000", "1:0:0:x", "1:0:0:2:3", "-1:2:3", "1:0:0:-1"}) {
    const absl::Status status = ParseSamplingSchedule(bad, &schedule);
    EXPECT_FALSE(status.ok()) << bad;
    EXPECT_THAT(std::string(status.message()), ::testing::HasSubstr("FIRST_LAUNCHES:WINDOW_MS:PERIOD_MS"));
  }
  EXPECT_EQ(schedule.ToString(), SamplingSchedule().ToString());
}

// Steps are ranges with a launch inside: at depth 0 by default, the named range at any depth when given; one range
// completed `steps` times on one thread is enough.
TEST(FirstStepsCounterTest, DepthZeroRangesWithLaunchesAreSteps) {
  FirstStepsCounter counter(3, 0);
  constexpr StringId kStep = 5, kForward = 6;
  uint64_t launches = 0;
  for (int i = 0; i < 2; ++i) {
    counter.OnPush(1, kStep, launches);
    counter.OnPush(1, kForward, launches);  // nested: not a step, however often it completes
    launches += 10;
    counter.OnPop(1, launches);
    counter.OnPush(1, kForward, launches);
    launches += 10;
    counter.OnPop(1, launches);
    counter.OnPop(1, launches);
  }
  EXPECT_FALSE(counter.done());
  counter.OnPush(2, kStep, 0);  // another thread's (a data loader's) ranges count on their own
  counter.OnPop(2, 0);          // and without a launch inside they are not steps
  EXPECT_FALSE(counter.done());
  counter.OnPush(1, kStep, launches);
  counter.OnPop(1, launches + 1);
  EXPECT_TRUE(counter.done());
}

TEST(FirstStepsCounterTest, TheNamedRangeAtAnyDepth) {
  constexpr StringId kEagerReference = 3, kStep = 4;
  FirstStepsCounter counter(2, kStep);
  counter.OnPush(1, kEagerReference, 0);  // graphcheck check: "graphcheck:step" inside "graphcheck:eager-reference"
  counter.OnPush(1, kStep, 0);
  counter.OnPop(1, 5);
  counter.OnPush(1, kStep, 5);
  EXPECT_FALSE(counter.done());
  counter.OnPop(1, 9);
  EXPECT_TRUE(counter.done());
}

TEST(FirstStepsCounterTest, UnmatchedPopsAndDeepStacksAreHarmless) {
  FirstStepsCounter counter(1, 0);
  counter.OnPop(1, 0);  // its push happened before recording began
  for (int i = 0; i < 100; ++i) counter.OnPush(1, 7, 0);
  for (int i = 0; i < 99; ++i) counter.OnPop(1, 1);
  EXPECT_FALSE(counter.done());  // only the nested ones completed
  counter.OnPop(1, 1);
  EXPECT_TRUE(counter.done());
  FirstStepsCounter never(0, 0);  // first_steps 0: off
  never.OnPush(1, 7, 0);
  never.OnPop(1, 1);
  EXPECT_FALSE(never.done());
}

TEST(LaunchSamplingTest, ParsesLaunchRecordingModes) {
  LaunchRecording mode = LaunchRecording::kSampled;
  ASSERT_TRUE(ParseLaunchRecording("all", &mode).ok());
  EXPECT_EQ(mode, LaunchRecording::kAll);
  ASSERT_TRUE(ParseLaunchRecording("capture", &mode).ok());
  EXPECT_EQ(mode, LaunchRecording::kCaptureOnly);
  ASSERT_TRUE(ParseLaunchRecording("sampled", &mode).ok());
  EXPECT_EQ(mode, LaunchRecording::kSampled);
  EXPECT_FALSE(ParseLaunchRecording("some", &mode).ok());
  EXPECT_EQ(LaunchRecordingName(LaunchRecording::kCaptureOnly), "capture-only");
}

// `graphcheck run` hands the mode to the recorder by name (GRAPHCHECK_LAUNCHES).
TEST(LaunchSamplingTest, ModeNamesParseBack) {
  for (LaunchRecording mode : {LaunchRecording::kAll, LaunchRecording::kSampled, LaunchRecording::kCaptureOnly}) {
    LaunchRecording parsed = LaunchRecording::kAll;
    ASSERT_TRUE(ParseLaunchRecording(LaunchRecordingName(mode), &parsed).ok()) << LaunchRecordingName(mode);
    EXPECT_EQ(parsed, mode);
  }
}

}  // namespace
}  // namespace graphcheck::trace
