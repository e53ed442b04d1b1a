// The recorded program's settings and their environment variables (run_settings.h).
#include "trace/run_settings.h"

#include <algorithm>
#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace graphcheck::trace {
namespace {

absl::Status BadValue(const char* variable, absl::string_view value, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(variable, " is \"", absl::CEscape(value), "\": ", why));
}

// A whole number as RunSettingsEnvironment writes it: decimal digits only (no sign, space or exponent, which
// SimpleAtoi would take and the probe's reading would not), within `Int`.
template <typename Int>
absl::Status ReadWholeNumber(const char* variable, absl::string_view value, Int* number) {
  const bool digits = !value.empty() && std::all_of(value.begin(), value.end(), absl::ascii_isdigit);
  if (!digits || !absl::SimpleAtoi(value, number)) {
    return BadValue(variable, value, absl::StrCat("not a whole number from 0 to ", std::numeric_limits<Int>::max()));
  }
  return absl::OkStatus();
}

}  // namespace

std::map<std::string, std::string> RunSettingsEnvironment(const RunSettings& settings) {
  return {
      {kTraceDirVariable, settings.trace_dir},
      {kActivityVariable, settings.record_activity ? "1" : "0"},
      {kLaunchesVariable, std::string(LaunchRecordingName(settings.launches))},
      {kSamplingVariable, settings.sampling.ToString()},
      {kStepRangeVariable, settings.step_range},
      {kHangTimeoutVariable, absl::StrCat(absl::ToInt64Milliseconds(settings.hang_timeout))},
      {kShadowVariable, absl::StrCat(settings.shadow_calls)},
      {kModuleCallsVariable, absl::StrCat(settings.module_calls)},
  };
}

absl::StatusOr<RunSettings> RunSettingsFromEnvironment(const std::function<const char*(const char*)>& get_variable) {
  RunSettings settings;
  if (const char* dir = get_variable(kTraceDirVariable); dir != nullptr) settings.trace_dir = dir;
  if (const char* activity = get_variable(kActivityVariable); activity != nullptr) {
    const absl::string_view value = activity;
    if (value != "0" && value != "1") return BadValue(kActivityVariable, value, "not 0 or 1");
    settings.record_activity = value == "1";
  }
  if (const char* launches = get_variable(kLaunchesVariable); launches != nullptr) {
    if (absl::Status s = ParseLaunchRecording(launches, &settings.launches); !s.ok()) {
      return BadValue(kLaunchesVariable, launches, s.message());
    }
  }
  if (const char* sampling = get_variable(kSamplingVariable); sampling != nullptr) {
    if (absl::Status s = ParseSamplingSchedule(sampling, &settings.sampling); !s.ok()) {
      return BadValue(kSamplingVariable, sampling, s.message());
    }
  }
  if (const char* range = get_variable(kStepRangeVariable); range != nullptr) settings.step_range = range;
  if (const char* timeout = get_variable(kHangTimeoutVariable); timeout != nullptr) {
    int64_t ms = 0;
    if (absl::Status s = ReadWholeNumber(kHangTimeoutVariable, timeout, &ms); !s.ok()) return s;
    settings.hang_timeout = absl::Milliseconds(ms);
  }
  if (const char* shadow = get_variable(kShadowVariable); shadow != nullptr) {
    if (absl::Status s = ReadWholeNumber(kShadowVariable, shadow, &settings.shadow_calls); !s.ok()) return s;
  }
  if (const char* calls = get_variable(kModuleCallsVariable); calls != nullptr) {
    if (absl::Status s = ReadWholeNumber(kModuleCallsVariable, calls, &settings.module_calls); !s.ok()) return s;
  }
  return settings;
}

}  // namespace graphcheck::trace
