// Chrome trace JSON (the "Trace Event Format", which Perfetto and chrome://tracing load) from recorded traces, so
// people can look at the timeline: one process per trace; CPU API calls and NVTX push/pop ranges on their threads;
// kernels, memcpys, memsets and graph launches on one track per GPU stream; capture windows (capture begin to capture
// end on a stream) on a track per capturing stream; NVTX start/end ranges as async slices; a flow arrow from each API
// call to the GPU work it caused (same correlation id). A replayed kernel sits inside its replay's slice on its
// stream's track and names the capture-time launch of its graph node.
#ifndef GRAPHCHECK_REPORT_CHROME_TRACE_H_
#define GRAPHCHECK_REPORT_CHROME_TRACE_H_

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "core/finding.h"
#include "trace/events.h"

namespace graphcheck {

// Where a call of a trace was made (its Python frames, torch operator, NVTX range): the analysis layer's
// TraceAnalysis::Locate, which cli passes in; tests pass their own.
using CallLocator = std::function<Location(const trace::Trace& trace, size_t call)>;

// Times are microseconds since the earliest event of all `traces` (so several processes share one timeline and keep
// nanosecond precision). Strings from the program are JSON-escaped, invalid UTF-8 replaced. A kernel a graph replay ran
// carries, in its arguments' "captured" object, where its node was captured (trace/captured_nodes.h): the call, the
// program's line, and with `locate`, the torch operator and NVTX range.
std::string TraceToChromeJson(const std::vector<const trace::Trace*>& traces, const CallLocator& locate = nullptr);

}  // namespace graphcheck

#endif  // GRAPHCHECK_REPORT_CHROME_TRACE_H_
