// What the recorder records of kernel launches outside captures, as `graphcheck run` and the recorder's environment
// variables spell it: GRAPHCHECK_LAUNCHES=all|sampled|capture and
// GRAPHCHECK_SAMPLING=FIRST_LAUNCHES:WINDOW_MS:PERIOD_MS.
#ifndef GRAPHCHECK_CORE_TRACE_LAUNCH_SAMPLING_H_
#define GRAPHCHECK_CORE_TRACE_LAUNCH_SAMPLING_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "core/trace/events.h"

namespace graphcheck::trace {

// When a sampling recorder records launches outside captures: from its start until it has recorded first_launches
// launches (the program's first steps, however long its set-up took), then, when period_ms > 0, window_ms out of every
// period_ms. Launch callbacks and kernel activity cost ~1.3 us per launch (H200), 20-30% of a launch-bound step.
// Later windows are off by default: on an H200 with CUDA 13, turning the launch callbacks and kernel activity on again
// at run time leaves every later launch slower even after they are turned off (a launch-bound step stayed ~10% slower
// after the second window; bench/results/2026-11-21-recorder-overhead-h200.md), while the first window, opened before
// the context exists, costs nothing once closed.
struct SamplingSchedule {
  uint32_t first_launches = 20000;
  uint32_t window_ms = 0;
  uint32_t period_ms = 0;  // 0: no windows after the first

  std::string ToString() const;  // "20000:0:0"
};

// "FIRST_LAUNCHES:WINDOW_MS:PERIOD_MS", with 0 < WINDOW_MS <= PERIOD_MS, or 0:0 for no windows after the first.
absl::Status ParseSamplingSchedule(absl::string_view text, SamplingSchedule* schedule);
// "all", "sampled" or "capture" (also "capture-only").
absl::Status ParseLaunchRecording(absl::string_view text, LaunchRecording* mode);

}  // namespace graphcheck::trace

#endif  // GRAPHCHECK_CORE_TRACE_LAUNCH_SAMPLING_H_
