#include "core/trace/launch_sampling.h"

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
  EXPECT_EQ(schedule.ToString(), "0:200:1000");
}

TEST(LaunchSamplingTest, TheDefaultAndZeroZeroMeanNoWindowsAfterTheFirst) {
  EXPECT_EQ(SamplingSchedule().period_ms, 0u);
  SamplingSchedule schedule;
  ASSERT_TRUE(ParseSamplingSchedule("5000:0:0", &schedule).ok());
  EXPECT_EQ(schedule.first_launches, 5000u);
  EXPECT_EQ(schedule.period_ms, 0u);
  EXPECT_EQ(schedule.ToString(), "5000:0:0");
}

TEST(LaunchSamplingTest, RefusesImpossibleSchedulesAndKeepsTheOldOne) {
  SamplingSchedule schedule;
  for (const char* bad : {"", "1:2", "a:b:c", "0:0:1000", "0:200:0", "0:2000:1000", "1:2:3:4", "-1:2:3"}) {
    const absl::Status status = ParseSamplingSchedule(bad, &schedule);
    EXPECT_FALSE(status.ok()) << bad;
    EXPECT_THAT(std::string(status.message()), ::testing::HasSubstr("FIRST_LAUNCHES:WINDOW_MS:PERIOD_MS"));
  }
  EXPECT_EQ(schedule.ToString(), SamplingSchedule().ToString());
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
