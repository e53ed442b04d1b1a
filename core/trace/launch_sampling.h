// What the recorder records of kernel launches outside captures, as `graphcheck run` and the recorder's environment
// variables spell it: GRAPHCHECK_LAUNCHES=all|sampled|capture and GRAPHCHECK_SAMPLING=FIRST_LAUNCHES:WINDOW_MS:PERIOD_MS.
#ifndef GRAPHCHECK_CORE_TRACE_LAUNCH_SAMPLING_H_
#define GRAPHCHECK_CORE_TRACE_LAUNCH_SAMPLING_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "core/trace/events.h"

namespace graphcheck::trace {

// When a sampling recorder records launches outside captures: from its start until it has recorded first_launches
// launches (the program's first steps, however long its set-up took), then window_ms out of every period_ms. Launch
// callbacks and kernel activity cost ~1.3 us per launch (H200), 20-30% of a launch-bound step; sampling keeps whole
// steps for the launch metrics at a small average cost.
struct SamplingSchedule {
  uint32_t first_launches = 20000;
  uint32_t window_ms = 500;
  uint32_t period_ms = 10000;

  std::string ToString() const;  // "20000:500:10000"
};

// "FIRST_LAUNCHES:WINDOW_MS:PERIOD_MS", 0 < WINDOW_MS <= PERIOD_MS.
absl::Status ParseSamplingSchedule(absl::string_view text, SamplingSchedule* schedule);
// "all", "sampled" or "capture" (also "capture-only").
absl::Status ParseLaunchRecording(absl::string_view text, LaunchRecording* mode);

}  // namespace graphcheck::trace

#endif  // GRAPHCHECK_CORE_TRACE_LAUNCH_SAMPLING_H_
