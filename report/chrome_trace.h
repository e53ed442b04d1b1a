// Chrome trace JSON (the "Trace Event Format", which Perfetto and chrome://tracing load) from recorded traces, so
// people can look at the timeline: one process per trace; CPU API calls and NVTX push/pop ranges on their threads;
// kernels, memcpys, memsets and graph launches on one track per GPU stream; capture windows (capture begin to capture
// end on a stream) on a track per capturing stream; NVTX start/end ranges as async slices; a flow arrow from each API
// call to the GPU work it caused (same correlation id).
#ifndef GRAPHCHECK_REPORT_CHROME_TRACE_H_
#define GRAPHCHECK_REPORT_CHROME_TRACE_H_

#include <string>
#include <vector>

#include "trace/events.h"

namespace graphcheck {

// Times are microseconds since the earliest event of all `traces` (so several processes share one timeline and keep
// nanosecond precision). Strings from the program are JSON-escaped, invalid UTF-8 replaced.
std::string TraceToChromeJson(const std::vector<const trace::Trace*>& traces);

}  // namespace graphcheck

#endif  // GRAPHCHECK_REPORT_CHROME_TRACE_H_
