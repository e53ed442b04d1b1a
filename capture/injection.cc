// Entry point of libgraphcheck_inject.so. The CUDA driver loads the library named by CUDA_INJECTION64_PATH during
// cuInit and calls InitializeInjection; `graphcheck run` sets that variable (and GRAPHCHECK_TRACE_DIR) for the
// program it starts and for every process that program starts.
#include <cstdio>

#include "capture/recorder.h"

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  const absl::Status status = graphcheck::capture::StartRecorder({});
  if (!status.ok()) {
    std::fprintf(stderr, "graphcheck: recorder not started: %s\n", std::string(status.message()).c_str());
    return 0;
  }
  return 1;
}
