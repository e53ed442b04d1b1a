// The capture-window analysis shared by every capture check: finds each capture (begin to end on its origin stream),
// the streams forked into it and whether they were joined, what it captured, and attributes every call that capture
// forbids or that failed with 900-910 to one root cause. Each capture check reports the problems of its own cause,
// so one root cause gives one finding, with the failures it went on to cause listed as consequences.
//
// Attribution, in one pass over the calls in time order:
//  - A call belongs to a capture by its capture id (for calls without a stream, only on the capturing thread: the
//    recorder gives them the id of any active capture), else by its stream (origin or forked), else by its thread
//    (the capturing thread), else, during a global-mode capture, it is a call from another thread.
//  - Calls that capture forbids are causes (see Classify in capture_windows.cc): synchronizations, queries,
//    allocations, lazy library initialisation, legacy-stream use, pageable copies, a capture end with 904.
//  - A failed call that is not itself a cause (a launch or the capture end returning 901 because the capture was
//    invalidated) is a consequence of the first failing cause in its capture; with no cause, the first such call is
//    an unexplained capture error and the later ones its consequences.
//  - The same cause at the same call site (API name and backtrace) in many captures is one problem with a count.
#ifndef GRAPHCHECK_ANALYSIS_CAPTURE_WINDOWS_H_
#define GRAPHCHECK_ANALYSIS_CAPTURE_WINDOWS_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "trace/events.h"

namespace graphcheck::analysis {

enum class CaptureCause : uint8_t {
  kSync,            // sync-in-capture
  kUnsafeApi,       // unsafe-api-in-capture (queries; calls from other threads during a global-mode capture)
  kAlloc,           // alloc-in-capture
  kLegacyStream,    // legacy-stream-in-capture
  kPageableMemcpy,  // pageable-memcpy
  kUnjoinedStream,  // unjoined-stream
  kLazyInit,        // warmup-insufficient
  kUnexplained,     // capture-error
};

// The check that reports problems of `cause`: "sync-in-capture", ...
absl::string_view CauseCheckId(CaptureCause cause);

struct CaptureWindow {
  size_t begin_call = 0;           // index into Trace::api_calls
  std::optional<size_t> end_call;  // absent when the capture never ended in the trace
  uint64_t stream_id = 0;          // origin stream
  uint32_t thread_id = 0;
  trace::CaptureMode mode = trace::CaptureMode::kUnknown;
  uint64_t capture_id = 0;                 // learned from the first call that reports it
  std::vector<uint64_t> forked_streams;    // in fork order
  std::vector<uint64_t> unjoined_streams;  // forked streams with captured work after their last join, at the end
  uint32_t captured_operations = 0;        // launches, async copies and memsets inside the capture
  uint64_t kernel_sequence = 0;            // hash of the captured kernels' names, in order
  uint64_t kernel_shapes = 0;              // hash of names with grid and block sizes
  // The problem (index into CaptureAnalysis::problems) that first broke this capture, or without a failure its first
  // problem; absent when it had none.
  std::optional<size_t> root_problem;
};

// When capture window `window` was open: from its begin call's start to its end call's start (UINT64_MAX when it
// never ended). What another thread did in that span went into the capture or broke it.
struct OpenSpan {
  uint64_t begin_ns = 0;
  uint64_t end_ns = 0;
};
OpenSpan OpenSpanOf(const trace::Trace& trace, const CaptureWindow& window);

// A later failure explained by a problem: calls of one API that returned one code.
struct Consequence {
  size_t first_call = 0;
  int32_t return_code = 0;
  uint32_t count = 0;
};

struct CaptureProblem {
  CaptureCause cause = CaptureCause::kUnexplained;
  size_t call = 0;               // the first occurrence
  uint32_t occurrences = 0;      // same cause at the same call site, over all captures
  uint32_t captures = 0;         // distinct captures it happened in
  bool failed = false;           // some occurrence returned an error
  bool other_thread = false;     // ran on another thread during a global-mode capture
  std::optional<size_t> window;  // capture of the first occurrence; absent for a capture that could not begin
  std::vector<Consequence> consequences;
  std::vector<uint64_t> streams;  // unjoined-stream: the forked streams never joined back
  std::string resource;           // warmup-insufficient: what was initialised ("cuBLAS workspace", "module")
};

class CaptureAnalysis {
 public:
  explicit CaptureAnalysis(const trace::Trace& trace);
  const std::vector<CaptureWindow>& windows() const { return windows_; }
  // In order of first occurrence.
  const std::vector<CaptureProblem>& problems() const { return problems_; }

 private:
  std::vector<CaptureWindow> windows_;
  std::vector<CaptureProblem> problems_;
};

// "the capture on stream 7 (thread 3, global mode)".
std::string DescribeCapture(const trace::Trace& trace, const CaptureWindow& window);

}  // namespace graphcheck::analysis

#endif  // GRAPHCHECK_ANALYSIS_CAPTURE_WINDOWS_H_
