// Typed decoding of raw CUPTI activity records into trace events (kernels, memcpy, memset). This is the seam where
// tests feed fake records: nothing here calls CUPTI, it only reads record structs.
#ifndef GRAPHCHECK_CAPTURE_ACTIVITY_DECODER_H_
#define GRAPHCHECK_CAPTURE_ACTIVITY_DECODER_H_

#include <cupti.h>

#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "trace/trace_writer.h"

namespace graphcheck::capture {

class ActivityDecoder {
 public:
  explicit ActivityDecoder(trace::TraceWriter* writer) : writer_(writer) {}

  // Decodes one record; kinds the recorder does not use are skipped.
  void Decode(const CUpti_Activity* record);
  // Decodes every record of a completed CUPTI buffer.
  void DecodeBuffer(uint8_t* buffer, size_t valid_size);

 private:
  // Kernel names arrive mangled, once per launch: demangle and intern each distinct name once.
  trace::StringId KernelName(const char* mangled);

  trace::TraceWriter* writer_;
  absl::Mutex mutex_;
  absl::flat_hash_map<std::string, trace::StringId> kernel_names_ ABSL_GUARDED_BY(mutex_);
};

// "_Z3fooi" -> "foo(int)"; returns the input when it is not a mangled name.
std::string DemangleKernelName(const char* name);

}  // namespace graphcheck::capture

#endif  // GRAPHCHECK_CAPTURE_ACTIVITY_DECODER_H_
