// The recorded program's settings (trace/run_settings.h): settings written into the environment read back as the same
// settings, defaults included; a value that does not read as written is an error naming the variable.
#include "trace/run_settings.h"

#include <map>
#include <string>
#include <tuple>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"

namespace graphcheck::trace {
namespace {

using ::testing::HasSubstr;

absl::StatusOr<RunSettings> Read(const std::map<std::string, std::string>& environment) {
  return RunSettingsFromEnvironment([&](const char* name) -> const char* {
    auto it = environment.find(name);
    return it == environment.end() ? nullptr : it->second.c_str();
  });
}

// Every field, so that settings compare equal exactly when they are.
auto Fields(const RunSettings& s) {
  return std::make_tuple(s.trace_dir, s.record_activity, s.launches, s.sampling.ToString(), s.step_range,
                         s.hang_timeout, s.shadow_calls, s.module_calls);
}

TEST(RunSettingsTest, SettingsReadBackAsWritten) {
  RunSettings settings;
  settings.trace_dir = "/tmp/traces";
  settings.record_activity = false;
  settings.launches = LaunchRecording::kCaptureOnly;
  ASSERT_TRUE(ParseSamplingSchedule("5000:500:10000:4", &settings.sampling).ok());
  settings.step_range = "train step";
  settings.hang_timeout = absl::Minutes(10);
  settings.shadow_calls = 4;
  settings.module_calls = 100000;
  const std::map<std::string, std::string> environment = RunSettingsEnvironment(settings);
  EXPECT_EQ(environment.size(), 8u);
  EXPECT_EQ(environment.at(kLaunchesVariable), "capture-only");
  EXPECT_EQ(environment.at(kHangTimeoutVariable), "600000");  // the unit its name says
  const absl::StatusOr<RunSettings> read = Read(environment);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(Fields(*read), Fields(settings));
}

TEST(RunSettingsTest, DefaultsReadBackAndAnEmptyEnvironmentIsTheDefault) {
  const RunSettings defaults;
  const absl::StatusOr<RunSettings> written = Read(RunSettingsEnvironment(defaults));
  ASSERT_TRUE(written.ok()) << written.status();
  EXPECT_EQ(Fields(*written), Fields(defaults));
  const absl::StatusOr<RunSettings> empty = Read({});
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(Fields(*empty), Fields(defaults));
}

TEST(RunSettingsTest, AValueThatDoesNotReadAsWrittenIsAnErrorNamingTheVariable) {
  const std::pair<const char*, const char*> bad[] = {
      {kActivityVariable, "yes"},      {kLaunchesVariable, "sometimes"},
      {kSamplingVariable, "1:2"},      {kHangTimeoutVariable, "ten minutes"},
      {kHangTimeoutVariable, "-3"},    {kHangTimeoutVariable, "1e3"},
      {kHangTimeoutVariable, " 5"},    {kHangTimeoutVariable, ""},
      {kShadowVariable, "+2"},         {kShadowVariable, "4294967296"},
      {kModuleCallsVariable, "1_000"},
  };
  for (const auto& [variable, value] : bad) {
    const absl::StatusOr<RunSettings> read = Read({{variable, value}});
    ASSERT_FALSE(read.ok()) << variable << "=" << value;
    EXPECT_EQ(read.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(read.status().message(), HasSubstr(absl::StrCat(variable, " is \"", value, "\"")));
  }
  EXPECT_THAT(Read({{kShadowVariable, "-1"}}).status().message(), HasSubstr("not a whole number from 0 to 4294967295"));
}

}  // namespace
}  // namespace graphcheck::trace
