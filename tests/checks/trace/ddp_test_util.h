// Test helper for ddp-default-stream and ddp-warmup-short: the Python probe's DDP events around the capture of
// FailedCapture (capture_test_util.h), and the failures the H100 runs of tests/gpu/programs/probe_cases.py's ddp-*
// modes recorded inside it.
#ifndef GRAPHCHECK_TESTS_CHECKS_TRACE_DDP_TEST_UTIL_H_
#define GRAPHCHECK_TESTS_CHECKS_TRACE_DDP_TEST_UTIL_H_

#include "tests/checks/trace/capture_test_util.h"
#include "tests/checks/trace/probe_test_util.h"

namespace graphcheck::testing_trace {

inline constexpr uint64_t kDdp = 0x7f00dd;

inline void Constructed(TraceBuilder& b, bool on_default_stream) {
  trace::ProbeEvent& e = b.Probe(100, 1, ProbeEventKind::kDdpConstructed, kDdp);
  e.value = on_default_stream ? 1 : 0;
  e.stack = TrainPyStack(b, 12);
}

// The DDP forward of a capture on stream 7 (begin 1000, end 5000), as forward `forwards` of the module.
inline void CapturedForward(TraceBuilder& b, uint64_t forwards, bool rebuilt) {
  trace::ProbeEvent& e = b.Probe(1500, 1, ProbeEventKind::kDdpCapturedForward, kDdp);
  e.value = forwards;
  e.value_now = rebuilt ? 1 : 0;
  e.stack = TrainPyStack(b, 40);
}

// Backward's AccumulateGrad made the legacy stream wait on the capturing stream: refused with 906 (what the H100 run
// recorded, cudaStreamWaitEvent on the legacy stream).
inline void LegacyWait(TraceBuilder& b) {
  ApiCall& wait = b.Call(3000, 1, "cudaStreamWaitEvent", ApiKind::kStreamWaitEvent, 0);
  wait.legacy_stream = true;
  wait.return_code = 906;
}

// DDP's runtime statistics synchronize an event inside the capture.
inline void EventSync(TraceBuilder& b) {
  ApiCall& sync = TraceBuilder::In(b.Call(3000, 1, "cudaEventSynchronize", ApiKind::kEventSynchronize), kCaptureId);
  sync.return_code = 900;
}

}  // namespace graphcheck::testing_trace

#endif  // GRAPHCHECK_TESTS_CHECKS_TRACE_DDP_TEST_UTIL_H_
