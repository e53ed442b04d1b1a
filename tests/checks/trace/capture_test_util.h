// Test helper for the capture checks: a capture on stream 7 by thread 1 whose first captured call is `make_offender`'s
// and whose end fails with 901, the shape every capture-error root cause leaves.
#ifndef GRAPHCHECK_TESTS_CHECKS_TRACE_CAPTURE_TEST_UTIL_H_
#define GRAPHCHECK_TESTS_CHECKS_TRACE_CAPTURE_TEST_UTIL_H_

#include <functional>

#include "tests/checks/trace/trace_builder.h"

namespace graphcheck::testing_trace {

constexpr uint64_t kStream = 7;
constexpr uint64_t kCaptureId = 11;

// begin at 1000, a captured launch at 2000, the offender at 3000 (added by `offender`), a launch failing 901 at 4000,
// the end at 5000 returning `end_rc` (0 = success with 1 node).
inline trace::Trace FailedCapture(const std::function<void(TraceBuilder&)>& offender, int32_t end_rc = 901,
                                  CaptureMode mode = CaptureMode::kGlobal) {
  TraceBuilder b;
  b.Begin(1000, 1, kStream, mode);
  TraceBuilder::In(b.Launch(2000, 1, kStream, "gemm"), kCaptureId, mode);
  offender(b);
  if (end_rc != 0) {
    ApiCall& after = TraceBuilder::In(b.Launch(4000, 1, kStream, "relu"), kCaptureId, mode);
    after.return_code = 901;
    after.capture_status = CaptureStatus::kInvalidated;
  }
  b.End(5000, 1, kStream, kCaptureId, end_rc, 1);
  return b.Build();
}

}  // namespace graphcheck::testing_trace

#endif  // GRAPHCHECK_TESTS_CHECKS_TRACE_CAPTURE_TEST_UTIL_H_
