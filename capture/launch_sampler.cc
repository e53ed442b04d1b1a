// Sampled launch recording (LaunchRecording::kSampled): the sampler thread opens and closes windows, and the launch
// callbacks are turned on only inside a window or a capture.
#include "absl/synchronization/mutex.h"
#include "capture/internal/recorder_state.h"

namespace graphcheck::capture::internal {

void Recorder::RunSampler() {
  const trace::SamplingSchedule& s = settings_.sampling;
  absl::MutexLock lock(&sampler_mutex_);
  // Waits `ms`; true when asked to stop.
  auto stopped_after = [&](uint32_t ms) {
    return sampler_mutex_.AwaitWithTimeout(absl::Condition(&sampler_stop_), absl::Milliseconds(ms));
  };
  // The first window lasts until the program's first launches are recorded, however long its set-up took, or until
  // its first steps completed (polled: the launch and NVTX callbacks only count). 5 ms: a 337 us step runs ~15 more
  // recorded steps before the window closes.
  constexpr uint32_t kPollMs = 5;
  while (launches_recorded_.load(std::memory_order_relaxed) < s.first_launches &&
         !(first_steps_ != nullptr && first_steps_->done())) {
    if (stopped_after(kPollMs)) return;
  }
  counting_launches_.store(false, std::memory_order_relaxed);
  SetSamplingWindow(false);
  if (s.period_ms == 0) return;
  while (!stopped_after(s.period_ms - s.window_ms)) {
    SetSamplingWindow(true);
    if (stopped_after(s.window_ms)) return;
    SetSamplingWindow(false);
  }
}

void Recorder::SetSamplingWindow(bool open) {
  if (open) {
    if (activity_ != nullptr) {
      if (absl::Status s = activity_->Resume(); !s.ok()) StatusFailed(s);
    }
    window_open_.store(true);
    ApplyLaunchCallbacks();
    writer_->WriteLaunchWindowEdge(/*open=*/true, Timestamp());
  } else {
    writer_->WriteLaunchWindowEdge(/*open=*/false, Timestamp());
    window_open_.store(false);
    ApplyLaunchCallbacks();
    if (activity_ != nullptr) {
      if (absl::Status s = activity_->Pause(); !s.ok()) StatusFailed(s);
    }
  }
}

void Recorder::ApplyLaunchCallbacks() {
  if (launch_callbacks_.empty()) return;
  bool want;
  do {
    want = window_open_.load() || active_captures_.load() > 0;
    for (const auto& [domain, cbid] : launch_callbacks_) {
      if (absl::Status s = subscription_->Enable(domain, cbid, want); !s.ok()) StatusFailed(s);
    }
    // After the callbacks are off: a launch that entered before then may never see its exit (seen on an H200), and
    // its older generation marks it as orphaned.
    if (!want) launch_generation_.fetch_add(1);
  } while (want != (window_open_.load() || active_captures_.load() > 0));
}

}  // namespace graphcheck::capture::internal
