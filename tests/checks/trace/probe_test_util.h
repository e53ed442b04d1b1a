// Test helper for the checks that read the Python probe's events: a capture the program left by an exception.
#ifndef GRAPHCHECK_TESTS_CHECKS_TRACE_PROBE_TEST_UTIL_H_
#define GRAPHCHECK_TESTS_CHECKS_TRACE_PROBE_TEST_UTIL_H_

#include <string>

#include "tests/checks/trace/capture_test_util.h"

namespace graphcheck::testing_trace {

using trace::ProbeEventKind;
using trace::ProbeOrigin;

inline constexpr uint64_t kGraph = 0x7f00aa;
inline constexpr char kPageable[] =
    "Cannot copy between CPU and CUDA tensors during CUDA graph capture unless the CPU tensor is pinned. Please use "
    "tensor.pin_memory() or allocate the tensor with pin_memory=True.";

inline trace::PythonStackId TrainPyStack(TraceBuilder& b, uint32_t line) {
  return b.PythonStack({{"/usr/lib/python3/dist-packages/torch/_tensor.py", 51, "cuda"},
                        {"/home/me/train.py", line, "body"},
                        {"/home/me/train.py", 90, "<module>"}});
}

// torch.cuda.graph whose body raised before CUDA saw anything: the probe's begin, CUDA's begin, the exception at the
// context's exit, then capture_end (which succeeds with an empty graph: nothing was captured).
inline trace::Trace CaughtExceptionInCapture(const std::string& text) {
  TraceBuilder b;
  b.Probe(900, 1, ProbeEventKind::kCaptureBegin, kGraph, ProbeOrigin::kUser);
  b.Begin(1000, 1, kStream);
  b.Exception(2000, 1, ProbeEventKind::kCaptureException, kGraph, "RuntimeError", text, TrainPyStack(b, 27));
  b.End(3000, 1, kStream, kCaptureId, 0, 0);
  b.Probe(3500, 1, ProbeEventKind::kCaptureEnd, kGraph);
  return b.Build();
}

}  // namespace graphcheck::testing_trace

#endif  // GRAPHCHECK_TESTS_CHECKS_TRACE_PROBE_TEST_UTIL_H_
