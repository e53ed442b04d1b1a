// The records the Python probe (python/probe/graphcheck_probe/bridge.py, through ctypes) hands the injection
// library's probe entry points, graphcheck_probe_event, graphcheck_probe_shadow and graphcheck_probe_allocations
// (injection.cc). Plain C
// layouts: the probe mirrors them field for field as ctypes structures, and tests/capture/probe_abi_test.py keeps the
// two equal. `size` is the caller's sizeof: a record shorter than the library's current one is refused, so a probe
// and a library from different builds never misread each other.
#ifndef GRAPHCHECK_CAPTURE_PROBE_ABI_H_
#define GRAPHCHECK_CAPTURE_PROBE_ABI_H_

#include <cstdint>

extern "C" {

// One probe event (trace::ProbeEvent documents the fields per kind).
struct GraphcheckProbeEvent {
  uint32_t size;
  int32_t kind;    // trace::ProbeEventKind
  int32_t origin;  // trace::ProbeOrigin
  uint64_t graph;
  uint64_t pool;
  uint64_t value;
  uint64_t value_now;
  const char* type;
  const char* text;
  const char* frames;  // an exception's frames, "file\x1fline\x1ffunction" joined by \x1e; null: the thread's stack
};

// One tensor compared under `graphcheck run --shadow` (trace::ShadowComparison).
struct GraphcheckShadowRecord {
  uint32_t size;
  uint32_t call;
  uint64_t module;
  const char* module_type;
  const char* name;
  const char* dtype;
  const char* precision;
  const char* draws;
  uint64_t numel;
  double max_abs_error;
  int64_t worst_index;
  double eager_at_worst;
  double graphed_at_worst;
  double eager_abs_max;
  double eager_spread;
  uint64_t eager_nonfinite;
  uint64_t graphed_nonfinite;
  uint8_t random;
  uint8_t subject;  // trace::ShadowSubject
  uint64_t shadow_ns;
  const char* frames;  // as GraphcheckProbeEvent's: a backward's caller, sent from autograd's thread; null: this thread
};

// One entry of PyTorch's CUDA caching-allocator history (trace::AllocatorEvent).
struct GraphcheckAllocation {
  uint64_t time_us;  // wall clock (CLOCK_REALTIME) microseconds, as the allocator's history stamps its entries
  uint64_t address;
  uint64_t bytes;
  uint32_t device;
  uint32_t action;  // trace::AllocatorEvent::Action
};
// A batch of them, oldest first.
struct GraphcheckAllocations {
  uint32_t size;
  uint32_t record_size;  // the caller's sizeof(GraphcheckAllocation)
  uint64_t now_us;       // the caller's wall clock when it called: moves time_us onto the recorder's clock
  uint64_t count;
  const GraphcheckAllocation* records;
};
}  // extern "C"

#endif  // GRAPHCHECK_CAPTURE_PROBE_ABI_H_
