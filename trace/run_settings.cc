// The recorded program's settings and their environment variables (run_settings.h).
#include "trace/run_settings.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace graphcheck::trace {

std::map<std::string, std::string> RunSettingsEnvironment(const RunSettings& settings) {
  std::map<std::string, std::string> environment = {
      {kTraceDirVariable, settings.trace_dir},
      {kActivityVariable, settings.record_activity ? "1" : "0"},
      {kLaunchesVariable, std::string(LaunchRecordingName(settings.launches))},
      {kSamplingVariable, settings.sampling.ToString()},
      {kStepRangeVariable, settings.step_range},
      {kHangTimeoutVariable, absl::StrCat(settings.hang_timeout_ms)},
      {kShadowVariable, absl::StrCat(settings.shadow_calls)},
      {kModuleCallsVariable, absl::StrCat(settings.module_calls)},
  };
  return environment;
}

RunSettings RunSettingsFromEnvironment(const std::function<const char*(const char*)>& get_variable) {
  RunSettings settings;
  if (const char* dir = get_variable(kTraceDirVariable); dir != nullptr) settings.trace_dir = dir;
  if (const char* activity = get_variable(kActivityVariable); activity != nullptr) {
    settings.record_activity = std::string(activity) != "0";
  }
  if (const char* launches = get_variable(kLaunchesVariable); launches != nullptr) {
    LaunchRecording mode = settings.launches;
    if (ParseLaunchRecording(launches, &mode).ok()) settings.launches = mode;
  }
  if (const char* sampling = get_variable(kSamplingVariable); sampling != nullptr) {
    SamplingSchedule schedule;
    if (ParseSamplingSchedule(sampling, &schedule).ok()) settings.sampling = schedule;
  }
  if (const char* range = get_variable(kStepRangeVariable); range != nullptr) settings.step_range = range;
  if (const char* timeout = get_variable(kHangTimeoutVariable); timeout != nullptr) {
    if (!absl::SimpleAtoi(timeout, &settings.hang_timeout_ms)) settings.hang_timeout_ms = 0;
  }
  if (const char* shadow = get_variable(kShadowVariable); shadow != nullptr) {
    if (!absl::SimpleAtoi(shadow, &settings.shadow_calls)) settings.shadow_calls = 0;
  }
  if (const char* calls = get_variable(kModuleCallsVariable); calls != nullptr) {
    if (!absl::SimpleAtoi(calls, &settings.module_calls)) settings.module_calls = 0;
  }
  return settings;
}

}  // namespace graphcheck::trace
