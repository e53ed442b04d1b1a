// Entry points of libgraphcheck_inject.so. The CUDA driver loads the library named by CUDA_INJECTION64_PATH during
// cuInit and calls InitializeInjection; `graphcheck run` sets that variable (and GRAPHCHECK_TRACE_DIR) for the
// program it starts and for every process that program starts. graphcheck_probe_event is the Python probe's way in
// (python/probe/graphcheck_probe.py calls it through ctypes once CUDA has loaded the library).
#include <cstdint>
#include <cstdio>

#include "capture/internal/recorder_state.h"
#include "capture/recorder.h"

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  const absl::Status status = graphcheck::capture::StartRecorder({});
  if (!status.ok()) {
    std::fprintf(stderr, "graphcheck: recorder not started: %s\n", std::string(status.message()).c_str());
    return 0;
  }
  return 1;
}

// Returns 1 when the event was written, 0 when the recorder is not running. Never fails the caller.
extern "C" __attribute__((visibility("default"))) int graphcheck_probe_event(int kind, int origin, uint64_t graph,
                                                                             uint64_t pool, uint64_t value,
                                                                             uint64_t value_now, const char* type,
                                                                             const char* text, const char* frames) {
  graphcheck::capture::internal::ProbeEventArgs args;
  args.kind = kind;
  args.origin = origin;
  args.graph = graph;
  args.pool = pool;
  args.value = value;
  args.value_now = value_now;
  args.type = type;
  args.text = text;
  args.frames = frames;
  return graphcheck::capture::internal::TheRecorder().OnProbeEvent(args);
}
