// What the recorder records of kernel launches outside captures, as `graphcheck run` and the recorder's environment
// variables spell it: GRAPHCHECK_LAUNCHES=all|sampled|capture and
// GRAPHCHECK_SAMPLING=FIRST_LAUNCHES:WINDOW_MS:PERIOD_MS.
#ifndef GRAPHCHECK_TRACE_LAUNCH_SAMPLING_H_
#define GRAPHCHECK_TRACE_LAUNCH_SAMPLING_H_

#include <atomic>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "trace/events.h"

namespace graphcheck::trace {

// When a sampling recorder records launches outside captures: from its start until it has recorded first_launches
// launches (the program's first steps, however long its set-up took), then, when period_ms > 0, window_ms out of every
// period_ms. Launch callbacks and kernel activity cost ~1.3 us per launch (H200), 20-30% of a launch-bound step.
// Later windows are off by default: on an H200 with CUDA 13, turning the launch callbacks and kernel activity on again
// at run time leaves every later launch slower even after they are turned off (a launch-bound step stayed ~10% slower
// after the second window; bench/results/2026-11-21-recorder-overhead-h200.md), while the first window, opened before
// the context exists, costs nothing once closed.
//
// The first window also closes once the program completed first_steps steps (FirstStepsCounter), so that a short
// program still runs most of its steps unrecorded and the forecast has their true time (analysis/launch_metrics.h:
// recording lengthened a 337 us launch-bound step by 15% on an H100).
struct SamplingSchedule {
  uint32_t first_launches = 20000;
  uint32_t window_ms = 0;
  uint32_t period_ms = 0;    // 0: no windows after the first
  uint32_t first_steps = 8;  // 0: the first window closes on first_launches only

  std::string ToString() const;  // "20000:0:0:8"
};

// "FIRST_LAUNCHES:WINDOW_MS:PERIOD_MS[:FIRST_STEPS]", with 0 < WINDOW_MS <= PERIOD_MS, or 0:0 for no windows after
// the first; FIRST_STEPS defaults to 8.
absl::Status ParseSamplingSchedule(absl::string_view text, SamplingSchedule* schedule);

// Counts the program's steps while the first launch-recording window is open, from the NVTX push/pop ranges the
// recorder sees: a step is a range that one thread pushed and popped with at least one kernel launch on that thread in
// between, either the named step range (`graphcheck run --region NAME`, the engine's "graphcheck:step") at any depth
// or, without a name, any range pushed at depth 0 (a training loop's "step", or "forward" and "backward"). The window
// may close once one range completed `steps` times on one thread. Thread-safe; cheap enough for NVTX callbacks.
class FirstStepsCounter {
 public:
  // `range`: the step range's interned message, 0 for depth-0 ranges.
  FirstStepsCounter(uint32_t steps, StringId range) : steps_(steps), range_(range) {}

  // `thread_launches`: the kernel launches the calling thread has made so far.
  void OnPush(uint32_t thread, StringId message, uint64_t thread_launches);
  void OnPop(uint32_t thread, uint64_t thread_launches);
  bool done() const { return done_.load(std::memory_order_relaxed); }

 private:
  static constexpr size_t kMaxDepth = 64;  // deeper ranges are not steps; they are counted to keep pops matched
  struct Open {
    StringId message = 0;
    uint64_t launches = 0;
    bool counted = false;  // a step candidate
  };
  struct ThreadRanges {
    std::vector<Open> open;
    size_t beyond = 0;  // pushes past kMaxDepth
  };

  const uint32_t steps_;
  const StringId range_;
  absl::Mutex mutex_;
  absl::flat_hash_map<uint32_t, ThreadRanges> threads_ ABSL_GUARDED_BY(mutex_);
  absl::flat_hash_map<std::pair<uint32_t, StringId>, uint32_t> completed_ ABSL_GUARDED_BY(mutex_);
  std::atomic<bool> done_{false};
};
// "all", "sampled" or "capture" (also "capture-only").
absl::Status ParseLaunchRecording(absl::string_view text, LaunchRecording* mode);

}  // namespace graphcheck::trace

#endif  // GRAPHCHECK_TRACE_LAUNCH_SAMPLING_H_
