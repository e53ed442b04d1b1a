// Entry points of libgraphcheck_inject.so. The CUDA driver loads the library named by CUDA_INJECTION64_PATH during
// cuInit and calls InitializeInjection; `graphcheck run` sets that variable (and GRAPHCHECK_TRACE_DIR) for the
// program it starts and for every process that program starts. graphcheck_probe_event and graphcheck_probe_shadow are
// the Python probe's way in (python/probe/graphcheck_probe.py calls them through ctypes once CUDA has loaded the
// library).
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

// One output of a graphed module compared with its eager forward under `graphcheck run --shadow N`
// (trace::ShadowComparison). Returns 1 when written, 0 when the recorder is not running.
extern "C" __attribute__((visibility("default"))) int graphcheck_probe_shadow(
    uint64_t module, const char* module_type, uint32_t call, const char* name, const char* dtype, const char* precision,
    uint64_t numel, double max_abs_error, int64_t worst_index, double eager_at_worst, double graphed_at_worst,
    double eager_abs_max, double eager_spread, uint64_t eager_nonfinite, uint64_t graphed_nonfinite, int random,
    uint64_t shadow_ns) {
  graphcheck::capture::internal::ShadowComparisonArgs args;
  graphcheck::trace::ShadowComparison& f = args.figures;
  f.module = module;
  f.call = call;
  f.numel = static_cast<int64_t>(numel);
  f.max_abs_error = max_abs_error;
  f.worst_index = worst_index;
  f.eager_at_worst = eager_at_worst;
  f.graphed_at_worst = graphed_at_worst;
  f.eager_abs_max = eager_abs_max;
  f.eager_spread = eager_spread;
  f.eager_nonfinite = static_cast<int64_t>(eager_nonfinite);
  f.graphed_nonfinite = static_cast<int64_t>(graphed_nonfinite);
  f.random = random != 0;
  f.shadow_ns = shadow_ns;
  args.module_type = module_type;
  args.name = name;
  args.dtype = dtype;
  args.precision = precision;
  return graphcheck::capture::internal::TheRecorder().OnShadowComparison(args);
}
