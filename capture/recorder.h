// The recorder: CUPTI callbacks and activity records of one process, normalized into trace events and appended to
// the process's trace file. Callbacks do the least work: classify by a precomputed table, read the few parameters a
// check needs, append one record. Capture state is only queried while a capture is in progress, and backtraces are
// only taken for the calls a check will point at.
#ifndef GRAPHCHECK_CAPTURE_RECORDER_H_
#define GRAPHCHECK_CAPTURE_RECORDER_H_

#include "absl/status/status.h"
#include "trace/run_settings.h"

namespace graphcheck::capture {

// Starts recording this process (idempotent). A CUPTI subscriber already present is recorded in the trace
// (cupti-busy) and is not an error: the program runs on.
absl::Status StartRecorder(const trace::RunSettings& settings);

}  // namespace graphcheck::capture

#endif  // GRAPHCHECK_CAPTURE_RECORDER_H_
