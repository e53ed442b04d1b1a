// Test helper for the performance checks: eager steps of 10 short kernels, optionally followed by graphed steps.
#ifndef GRAPHCHECK_TESTS_CHECKS_TRACE_LAUNCH_TEST_UTIL_H_
#define GRAPHCHECK_TESTS_CHECKS_TRACE_LAUNCH_TEST_UTIL_H_

#include <algorithm>
#include <string>

#include "tests/checks/trace/trace_builder.h"

namespace graphcheck::testing_trace {

// `eager` eager steps of 100 us (7: 5 whole ones after the first, warmup, step: enough to forecast from): 10 kernels of
// `kernel_ns`, launched 11 us apart (the host launches all step long, as a launch-bound Python loop does), each
// starting 5 us after its launch
// (kernel_ns <= 1 us keeps them from overlapping; longer ones run back to back on the GPU). Then `graphed` steps
// of `graphed_step_ns`, each one graph launch whose GPU span is 20 us, with `replayed_kernels` kernel records: the
// eager step's kernels k0..k9 in turn, or all named `replayed_name`.
inline trace::Trace LaunchBoundTrace(uint64_t kernel_ns, int graphed = 0, uint64_t graphed_step_ns = 30000,
                                     int eager = 7, int replayed_kernels = 0, const std::string& replayed_name = "") {
  TraceBuilder b;
  uint64_t t = 1000000;
  for (int s = 0; s < eager; ++s, t += 100000) {
    uint64_t gpu = t + 5000;
    for (int k = 0; k < 10; ++k) {
      ApiCall& call = b.Launch(t + k * 11000, 1, 7, "k" + std::to_string(k));
      trace::KernelRecord kernel;
      kernel.correlation_id = call.correlation_id;
      kernel.start_ns = std::max(gpu, t + k * 11000 + 5000);
      kernel.end_ns = kernel.start_ns + kernel_ns;
      kernel.name = call.kernel_name;
      kernel.stream_id = 7;
      gpu = kernel.end_ns;
      b.trace().AddKernel(kernel);
    }
  }
  for (int s = 0; s < graphed; ++s, t += graphed_step_ns) {
    const ApiCall& replay = b.Replay(t, 1, 7, 1, 2000, 20000);
    for (int k = 0; k < replayed_kernels; ++k) {  // as CUPTI reports a replay's kernels
      trace::KernelRecord kernel;
      kernel.correlation_id = replay.correlation_id;
      kernel.start_ns = t + 2000 + k * 20000 / replayed_kernels;
      kernel.end_ns = kernel.start_ns + 20000 / replayed_kernels;
      kernel.name = b.trace().Intern(replayed_name.empty() ? "k" + std::to_string(k % 10) : replayed_name);
      kernel.stream_id = 7;
      kernel.graph_id = 1;
      b.trace().AddKernel(kernel);
    }
  }
  return b.Build();
}

// A program recorded with sampled launch recording: `steps` NVTX "step" ranges, the first `recorded` of them inside
// one launch-recording window. A recorded step lasts 150 us (the recorder's callbacks lengthen it) and runs 10 kernels
// of 1 us launched 16 us apart, all step long; a step outside the window lasts 100 us and has no launch or kernel
// records. Then `graphed` steps of 40 us outside every window, each one graph replay with no GPU record (activity is
// paused outside windows).
inline trace::Trace SampledTrace(int steps, int recorded, uint64_t kernel_ns = 1000, int graphed = 0) {
  TraceBuilder b;
  b.trace().recorder.launches = trace::LaunchRecording::kSampled;
  uint64_t t = 1000000;
  uint64_t gpu_free = 0;  // one stream: a kernel starts when the one before it ended
  const uint64_t window_start = t;
  for (int s = 0; s < steps; ++s) {
    const bool inside = s < recorded;
    b.Push(t, 1, "step");
    if (inside) {
      for (int k = 0; k < 10; ++k) {
        ApiCall& call = b.Launch(t + k * 16000, 1, 7, "k" + std::to_string(k));
        trace::KernelRecord kernel;
        kernel.correlation_id = call.correlation_id;
        kernel.start_ns = std::max(t + k * 16000 + 5000, gpu_free);
        kernel.end_ns = gpu_free = kernel.start_ns + kernel_ns;
        kernel.name = call.kernel_name;
        kernel.stream_id = 7;
        b.trace().AddKernel(kernel);
      }
    }
    t += inside ? 150000 : 100000;
    b.Pop(t, 1);
    if (s + 1 == recorded) b.trace().launch_windows.push_back({window_start, t});
  }
  for (int s = 0; s < graphed; ++s, t += 40000) {
    b.Push(t, 1, "step");
    b.Call(t + 1000, 1, "cudaGraphLaunch", ApiKind::kGraphLaunch, 7).graph_id = 1;
    b.Pop(t + 40000, 1);
  }
  return b.Build();
}

}  // namespace graphcheck::testing_trace

#endif  // GRAPHCHECK_TESTS_CHECKS_TRACE_LAUNCH_TEST_UTIL_H_
