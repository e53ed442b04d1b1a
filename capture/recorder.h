// The recorder: CUPTI callbacks and activity records of one process, normalized into trace events and appended to
// the process's trace file. Callbacks do the least work: classify by a precomputed table, read the few parameters a
// check needs, append one record. Capture state is only queried while a capture is in progress, and backtraces are
// only taken for the calls a check will point at.
#ifndef GRAPHCHECK_CAPTURE_RECORDER_H_
#define GRAPHCHECK_CAPTURE_RECORDER_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "trace/events.h"
#include "trace/launch_sampling.h"

namespace graphcheck::capture {

struct RecorderOptions {
  std::string trace_dir;  // where trace-<host>-<pid>.gctrace goes
  uint32_t activity_flush_period_ms = 250;
  // GPU activity records (kernel, memcpy and memset timings). Off (GRAPHCHECK_ACTIVITY=0, `graphcheck run
  // --no-activity`) keeps API calls and capture state but drops GPU times: cheaper, and no launch-overhead metrics.
  bool record_activity = true;
  // Kernel launches outside captures (and GPU activity, when recorded): all, sampled windows (the default), or none
  // (capture-only: eager steps then cost almost nothing). Launches inside captures are always recorded.
  trace::LaunchRecording launches = trace::LaunchRecording::kSampled;
  trace::SamplingSchedule sampling;
  // The NVTX range that marks one step (GRAPHCHECK_STEP_RANGE, `graphcheck run --region`): the first sampling window
  // closes after sampling.first_steps of them. Empty: any range the program pushes at depth 0.
  std::string step_range;
  // GRAPHCHECK_HANG_TIMEOUT_MS (`graphcheck run --hang-timeout`): a thread waiting longer than this in a synchronizing
  // CUDA call ends the process with exit status 124 after a Hang record says where it waited. 0: no bound.
  uint64_t hang_timeout_ms = 0;
};

// Starts recording this process (idempotent). Reads GRAPHCHECK_TRACE_DIR when options.trace_dir is empty,
// GRAPHCHECK_ACTIVITY=0 to turn activity records off, GRAPHCHECK_LAUNCHES=all|sampled|capture and
// GRAPHCHECK_SAMPLING=FIRST_LAUNCHES:WINDOW_MS:PERIOD_MS[:FIRST_STEPS], GRAPHCHECK_STEP_RANGE and
// GRAPHCHECK_HANG_TIMEOUT_MS. A CUPTI subscriber
// already present is recorded in the trace (cupti-busy) and is not an error: the program runs on.
absl::Status StartRecorder(const RecorderOptions& options);

}  // namespace graphcheck::capture

#endif  // GRAPHCHECK_CAPTURE_RECORDER_H_
