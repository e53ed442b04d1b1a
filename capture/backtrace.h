// Host backtraces for the calls a check will point at. Unwinding uses the C library's DWARF unwinder (works through
// libraries built without frame pointers, such as libcuda); each distinct program counter is symbolized once with
// Abseil's symbolizer and each distinct stack is stored once in the trace.
#ifndef GRAPHCHECK_CAPTURE_BACKTRACE_H_
#define GRAPHCHECK_CAPTURE_BACKTRACE_H_

#include <cstdint>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "trace/trace_writer.h"

namespace graphcheck::capture {

class BacktraceRecorder {
 public:
  // Records the calling thread's stack, minus the frames of graphcheck, CUPTI and the CUDA driver at its top.
  trace::BacktraceId Capture(trace::TraceWriter* writer);

 private:
  static constexpr int kMaxFrames = 48;
  static constexpr int kKeptFrames = 24;

  trace::StringId FrameName(trace::TraceWriter* writer, void* pc) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);

  absl::Mutex mutex_;
  absl::flat_hash_map<void*, trace::StringId> frames_ ABSL_GUARDED_BY(mutex_);
  absl::flat_hash_map<void*, bool> is_tool_frame_ ABSL_GUARDED_BY(mutex_);
};

}  // namespace graphcheck::capture

#endif  // GRAPHCHECK_CAPTURE_BACKTRACE_H_
