#include "trace/launch_sampling.h"

#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace graphcheck::trace {

std::string SamplingSchedule::ToString() const {
  return absl::StrCat(first_launches, ":", window_ms, ":", period_ms, ":", first_steps);
}

absl::Status ParseSamplingSchedule(absl::string_view text, SamplingSchedule* schedule) {
  const std::vector<absl::string_view> parts = absl::StrSplit(text, ':');
  SamplingSchedule parsed;
  if ((parts.size() != 3 && parts.size() != 4) || !absl::SimpleAtoi(parts[0], &parsed.first_launches) ||
      !absl::SimpleAtoi(parts[1], &parsed.window_ms) || !absl::SimpleAtoi(parts[2], &parsed.period_ms) ||
      (parts.size() == 4 && !absl::SimpleAtoi(parts[3], &parsed.first_steps)) ||
      (parsed.window_ms == 0) != (parsed.period_ms == 0) || parsed.window_ms > parsed.period_ms) {
    return absl::InvalidArgumentError(
        absl::StrCat("sampling schedule '", text,
                     "' is not FIRST_LAUNCHES:WINDOW_MS:PERIOD_MS[:FIRST_STEPS] with 0 < WINDOW_MS <= PERIOD_MS, or "
                     "FIRST_LAUNCHES:0:0[:FIRST_STEPS]"));
  }
  *schedule = parsed;
  return absl::OkStatus();
}

void FirstStepsCounter::OnPush(uint32_t thread, StringId message, uint64_t thread_launches) {
  if (steps_ == 0 || done()) return;
  absl::MutexLock lock(&mutex_);
  ThreadRanges& ranges = threads_[thread];
  if (ranges.open.size() >= kMaxDepth) {
    ++ranges.beyond;
    return;
  }
  const bool counted = range_ != 0 ? message == range_ : ranges.open.empty();
  ranges.open.push_back({message, thread_launches, counted});
}

void FirstStepsCounter::OnPop(uint32_t thread, uint64_t thread_launches) {
  if (steps_ == 0 || done()) return;
  absl::MutexLock lock(&mutex_);
  auto it = threads_.find(thread);
  if (it == threads_.end()) return;  // a pop without its push: the range began before recording
  ThreadRanges& ranges = it->second;
  if (ranges.beyond > 0) {
    --ranges.beyond;
    return;
  }
  if (ranges.open.empty()) return;
  const Open range = ranges.open.back();
  ranges.open.pop_back();
  if (!range.counted || thread_launches == range.launches) return;  // no launch inside: not a step
  if (++completed_[{thread, range.message}] >= steps_) done_.store(true, std::memory_order_relaxed);
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
