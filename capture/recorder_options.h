// What the recorder records (trace/run_settings.h: `graphcheck run`'s settings, which InitializeInjection reads from
// the environment it set), and how often it flushes GPU activity records. A capture-only run records no activity.
// Apart from recorder.h so that the recorder's internal state (internal/recorder_state.h) holds it without including
// the interface its implementation defines.
#ifndef GRAPHCHECK_CAPTURE_RECORDER_OPTIONS_H_
#define GRAPHCHECK_CAPTURE_RECORDER_OPTIONS_H_

#include <cstdint>

#include "trace/run_settings.h"

namespace graphcheck::capture {

struct RecorderOptions : trace::RunSettings {
  uint32_t activity_flush_period_ms = 250;
};

}  // namespace graphcheck::capture

#endif  // GRAPHCHECK_CAPTURE_RECORDER_OPTIONS_H_
