// Entry points of libgraphcheck_inject.so. The CUDA driver loads the library named by CUDA_INJECTION64_PATH during
// cuInit and calls InitializeInjection; `graphcheck run` sets that variable (and the settings of
// trace/run_settings.h) for the program it starts and for every process that program starts. graphcheck_probe_event,
// graphcheck_probe_shadow and graphcheck_probe_allocations are the Python probe's way in
// (python/probe/graphcheck_probe/bridge.py calls them through ctypes once CUDA has loaded the library), each with a
// record of capture/probe_abi.h.
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "capture/internal/recorder_state.h"
#include "capture/probe_abi.h"
#include "capture/recorder.h"
#include "trace/run_settings.h"

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  const absl::StatusOr<graphcheck::trace::RunSettings> settings =
      graphcheck::trace::RunSettingsFromEnvironment(std::getenv);
  const absl::Status status = settings.ok() ? graphcheck::capture::StartRecorder(*settings) : settings.status();
  if (!status.ok()) {
    std::fprintf(stderr, "graphcheck: recorder not started: %s\n", std::string(status.message()).c_str());
    return 0;
  }
  return 1;
}

// Returns 1 when the event was written, 0 when the recorder is not running or the record is not one it knows. Never
// fails the caller.
extern "C" __attribute__((visibility("default"))) int graphcheck_probe_event(const GraphcheckProbeEvent* event) {
  if (event == nullptr || event->size < sizeof(GraphcheckProbeEvent)) return 0;
  return graphcheck::capture::internal::TheRecorder().OnProbeEvent(*event);
}

// One tensor compared under `graphcheck run --shadow N` (trace::ShadowComparison). Returns 1 when written, 0 when
// the recorder is not running or the record is not one it knows.
extern "C" __attribute__((visibility("default"))) int graphcheck_probe_shadow(const GraphcheckShadowRecord* record) {
  if (record == nullptr || record->size < sizeof(GraphcheckShadowRecord)) return 0;
  return graphcheck::capture::internal::TheRecorder().OnShadowComparison(*record);
}

// The caching allocator's history, in one batch at the program's exit (trace::AllocatorEvent). Returns how many
// entries were written: 0 when the recorder is not running or the batch is not one it knows.
extern "C" __attribute__((visibility("default"))) int64_t graphcheck_probe_allocations(
    const GraphcheckAllocations* batch) {
  if (batch == nullptr || batch->size < sizeof(GraphcheckAllocations) ||
      batch->record_size != sizeof(GraphcheckAllocation) || (batch->count > 0 && batch->records == nullptr)) {
    return 0;
  }
  return graphcheck::capture::internal::TheRecorder().OnAllocatorHistory(*batch);
}
