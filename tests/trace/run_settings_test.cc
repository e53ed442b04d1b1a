// The recorded program's settings (trace/run_settings.h): what `graphcheck run` writes into the environment reads back
// as the same settings, defaults included; values set by hand that do not parse keep their defaults.
#include "trace/run_settings.h"

#include <map>
#include <string>

#include <gtest/gtest.h>

namespace graphcheck::trace {
namespace {

RunSettings Read(const std::map<std::string, std::string>& environment) {
  return RunSettingsFromEnvironment([&](const char* name) -> const char* {
    auto it = environment.find(name);
    return it == environment.end() ? nullptr : it->second.c_str();
  });
}

TEST(RunSettingsTest, WhatIsWrittenReadsBack) {
  RunSettings settings;
  settings.trace_dir = "/tmp/traces";
  settings.record_activity = false;
  settings.launches = LaunchRecording::kCaptureOnly;
  ASSERT_TRUE(ParseSamplingSchedule("5000:500:10000:4", &settings.sampling).ok());
  settings.step_range = "train step";
  settings.hang_timeout_ms = 600000;
  settings.shadow_calls = 4;
  settings.module_calls = 100000;
  const std::map<std::string, std::string> environment = RunSettingsEnvironment(settings);
  EXPECT_EQ(environment.size(), 8u);
  EXPECT_EQ(environment.at(kLaunchesVariable), "capture-only");
  const RunSettings read = Read(environment);
  EXPECT_EQ(read.trace_dir, settings.trace_dir);
  EXPECT_FALSE(read.record_activity);
  EXPECT_EQ(read.launches, settings.launches);
  EXPECT_EQ(read.sampling.ToString(), "5000:500:10000:4");
  EXPECT_EQ(read.step_range, settings.step_range);
  EXPECT_EQ(read.hang_timeout_ms, 600000u);
  EXPECT_EQ(read.shadow_calls, 4u);
  EXPECT_EQ(read.module_calls, 100000u);
}

TEST(RunSettingsTest, DefaultsRoundTripAndAnEmptyEnvironmentIsTheDefault) {
  const RunSettings defaults;
  const RunSettings read = Read(RunSettingsEnvironment(defaults));
  EXPECT_TRUE(read.record_activity);
  EXPECT_EQ(read.launches, LaunchRecording::kSampled);
  EXPECT_EQ(read.sampling.ToString(), defaults.sampling.ToString());
  EXPECT_EQ(read.hang_timeout_ms, 0u);
  EXPECT_EQ(read.shadow_calls, 0u);
  EXPECT_EQ(read.module_calls, 0u);
  EXPECT_EQ(Read({}).launches, LaunchRecording::kSampled);
  EXPECT_TRUE(Read({}).trace_dir.empty());
}

TEST(RunSettingsTest, ValuesThatDoNotParseKeepTheirDefaults) {
  const RunSettings read = Read({{kLaunchesVariable, "sometimes"},
                                 {kSamplingVariable, "1:2"},
                                 {kHangTimeoutVariable, "ten minutes"},
                                 {kShadowVariable, "-3"}});
  EXPECT_EQ(read.launches, LaunchRecording::kSampled);
  EXPECT_EQ(read.sampling.ToString(), RunSettings{}.sampling.ToString());
  EXPECT_EQ(read.hang_timeout_ms, 0u);
  EXPECT_EQ(read.shadow_calls, 0u);
}

}  // namespace
}  // namespace graphcheck::trace
