#include "core/trace/launch_sampling.h"

#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace graphcheck::trace {

std::string SamplingSchedule::ToString() const { return absl::StrCat(first_launches, ":", window_ms, ":", period_ms); }

absl::Status ParseSamplingSchedule(absl::string_view text, SamplingSchedule* schedule) {
  const std::vector<absl::string_view> parts = absl::StrSplit(text, ':');
  SamplingSchedule parsed;
  if (parts.size() != 3 || !absl::SimpleAtoi(parts[0], &parsed.first_launches) ||
      !absl::SimpleAtoi(parts[1], &parsed.window_ms) || !absl::SimpleAtoi(parts[2], &parsed.period_ms) ||
      (parsed.window_ms == 0) != (parsed.period_ms == 0) || parsed.window_ms > parsed.period_ms) {
    return absl::InvalidArgumentError(absl::StrCat(
        "sampling schedule '", text,
        "' is not FIRST_LAUNCHES:WINDOW_MS:PERIOD_MS with 0 < WINDOW_MS <= PERIOD_MS, or FIRST_LAUNCHES:0:0"));
  }
  *schedule = parsed;
  return absl::OkStatus();
}

absl::Status ParseLaunchRecording(absl::string_view text, LaunchRecording* mode) {
  if (text == "all") {
    *mode = LaunchRecording::kAll;
  } else if (text == "sampled") {
    *mode = LaunchRecording::kSampled;
  } else if (text == "capture" || text == "capture-only") {
    *mode = LaunchRecording::kCaptureOnly;
  } else {
    return absl::InvalidArgumentError(absl::StrCat("launch recording '", text, "' is not all, sampled or capture"));
  }
  return absl::OkStatus();
}

}  // namespace graphcheck::trace
