// Test helper: builds synthetic traces in memory (the shapes the recorder writes) and runs one check on them.
#ifndef GRAPHCHECK_TESTS_CHECKS_TRACE_TRACE_BUILDER_H_
#define GRAPHCHECK_TESTS_CHECKS_TRACE_TRACE_BUILDER_H_

#include <algorithm>
#include <deque>
#include <string>
#include <tuple>
#include <vector>

#include "analysis/trace_analysis.h"
#include "core/check.h"
#include "trace/events.h"

namespace graphcheck::testing_trace {

// Tests build whole records; Build() stores them the way the reader does (split and interned).
using ApiCall = trace::ApiCallRecord;
using trace::ApiKind;
using trace::CaptureMode;
using trace::CaptureStatus;

class TraceBuilder {
 public:
  TraceBuilder() { trace_.process.pid = 4242; }

  trace::Trace& trace() { return trace_; }

  // A call at `t` (ns), lasting 1 us.
  ApiCall& Call(uint64_t t, uint32_t thread, const std::string& name, ApiKind kind, uint64_t stream = 0) {
    ApiCall call;
    call.start_ns = t;
    call.end_ns = t + 1000;
    call.thread_id = thread;
    call.name = trace_.Intern(name);
    call.kind = kind;
    call.stream_id = stream;
    call.correlation_id = ++correlation_;
    calls_.push_back(call);
    return calls_.back();
  }
  // Marks a call as made on a stream that is capturing (capture `id`).
  static ApiCall& In(ApiCall& call, uint64_t id, CaptureMode mode = CaptureMode::kGlobal) {
    call.capture_status = CaptureStatus::kActive;
    call.capture_id = id;
    call.capture_mode = mode;
    return call;
  }

  ApiCall& Begin(uint64_t t, uint32_t thread, uint64_t stream, CaptureMode mode = CaptureMode::kGlobal) {
    ApiCall& call = Call(t, thread, "cudaStreamBeginCapture", ApiKind::kCaptureBegin, stream);
    call.capture_mode = mode;
    return call;
  }
  ApiCall& End(uint64_t t, uint32_t thread, uint64_t stream, uint64_t id, int32_t rc, uint32_t nodes) {
    ApiCall& call = In(Call(t, thread, "cudaStreamEndCapture", ApiKind::kCaptureEnd, stream), id);
    call.return_code = rc;
    call.node_count = rc == 0 ? nodes : 0;
    return call;
  }
  ApiCall& Launch(uint64_t t, uint32_t thread, uint64_t stream, const std::string& kernel,
                  std::array<uint32_t, 3> grid = {1, 1, 1}) {
    ApiCall& call = Call(t, thread, "cudaLaunchKernel", ApiKind::kKernelLaunch, stream);
    call.kernel_name = trace_.Intern(kernel);
    call.grid = grid;
    call.block = {128, 1, 1};
    return call;
  }
  // A launch and the kernel it ran, `delay` ns after the launch began, lasting `duration` ns.
  ApiCall& LaunchAndRun(uint64_t t, uint32_t thread, uint64_t stream, const std::string& kernel, uint64_t delay,
                        uint64_t duration, std::array<uint32_t, 3> grid = {1, 1, 1}) {
    ApiCall& call = Launch(t, thread, stream, kernel, grid);
    trace::KernelRecord k;
    k.correlation_id = call.correlation_id;
    k.start_ns = t + delay;
    k.end_ns = t + delay + duration;
    k.stream_id = stream;
    k.name = call.kernel_name;
    k.grid = grid;
    trace_.AddKernel(k);
    return call;
  }
  // A graph launch and its GPU span.
  static constexpr uint32_t kExecGraphIdOffset = 1000;

  ApiCall& Replay(uint64_t t, uint32_t thread, uint64_t stream, uint64_t graph, uint64_t delay, uint64_t duration) {
    ApiCall& call = Call(t, thread, "cudaGraphLaunch", ApiKind::kGraphLaunch, stream);
    call.graph_id = graph;
    trace::GraphLaunchActivity g;
    g.correlation_id = call.correlation_id;
    g.start_ns = t + delay;
    g.end_ns = t + delay + duration;
    g.stream_id = stream;
    // As CUPTI reports a replay: with its executable graph's id, not the captured graph's that the launch call names.
    g.graph_id = static_cast<uint32_t>(graph) + kExecGraphIdOffset;
    trace_.graph_launches.push_back(g);
    return call;
  }

  trace::BacktraceId Backtrace(const std::vector<std::string>& frames) {
    trace::Backtrace backtrace;
    for (const std::string& frame : frames) backtrace.frames.push_back(trace_.Intern(frame));
    trace_.backtraces.push_back(backtrace);
    return static_cast<trace::BacktraceId>(trace_.backtraces.size());
  }

  // A Python stack of (file, line, function), innermost first.
  trace::PythonStackId PythonStack(const std::vector<std::tuple<std::string, uint32_t, std::string>>& frames) {
    trace::PythonStack stack;
    for (const auto& [file, line, function] : frames) {
      stack.frames.push_back({trace_.Intern(file), line, trace_.Intern(function)});
    }
    trace_.python_stacks.push_back(stack);
    return static_cast<trace::PythonStackId>(trace_.python_stacks.size());
  }

  // An event of the Python probe at `t` on `thread` (python/probe/graphcheck_probe/ sends these).
  trace::ProbeEvent& Probe(uint64_t t, uint32_t thread, trace::ProbeEventKind kind, uint64_t graph = 0,
                           trace::ProbeOrigin origin = trace::ProbeOrigin::kUnknown) {
    trace::ProbeEvent& e = trace_.probe_events.emplace_back();
    e.kind = kind;
    e.origin = origin;
    e.thread_id = thread;
    e.time_ns = t;
    e.graph = graph;
    return e;
  }
  trace::StringId Intern(const std::string& text) { return trace_.Intern(text); }
  // A state-rebound event of the probe: `role` ("parameter", "buffer", "static-input") `name` moved.
  trace::ProbeEvent& Rebound(uint64_t t, uint32_t thread, uint64_t graph, const std::string& role,
                             const std::string& name, uint64_t at_capture, uint64_t now) {
    trace::ProbeEvent& e = Probe(t, thread, trace::ProbeEventKind::kStateRebound, graph);
    e.type = trace_.Intern(role);
    e.text = trace_.Intern(name);
    e.value = at_capture;
    e.value_now = now;
    return e;
  }
  // An exception event: type and message, raised at `stack`.
  trace::ProbeEvent& Exception(uint64_t t, uint32_t thread, trace::ProbeEventKind kind, uint64_t graph,
                               const std::string& type, const std::string& text, trace::PythonStackId stack) {
    trace::ProbeEvent& e = Probe(t, thread, kind, graph);
    e.type = trace_.Intern(type);
    e.text = trace_.Intern(text);
    e.stack = stack;
    return e;
  }

  // `domain` "": the default domain.
  trace::NvtxEvent& Push(uint64_t t, uint32_t thread, const std::string& message, const std::string& domain = "") {
    trace::NvtxEvent e;
    e.kind = trace::NvtxEvent::Kind::kPush;
    e.thread_id = thread;
    e.time_ns = t;
    e.message = trace_.Intern(message);
    e.domain = domain.empty() ? 0 : trace_.Intern(domain);
    return trace_.nvtx.emplace_back(e);
  }
  void Pop(uint64_t t, uint32_t thread, const std::string& domain = "") {
    trace::NvtxEvent e;
    e.kind = trace::NvtxEvent::Kind::kPop;
    e.thread_id = thread;
    e.time_ns = t;
    e.domain = domain.empty() ? 0 : trace_.Intern(domain);
    trace_.nvtx.push_back(e);
  }

  // The trace as the reader returns it: calls sorted by start time.
  trace::Trace Build() {
    std::vector<ApiCall> calls(calls_.begin(), calls_.end());
    std::stable_sort(calls.begin(), calls.end(),
                     [](const ApiCall& a, const ApiCall& b) { return a.start_ns < b.start_ns; });
    trace::Trace trace = trace_;
    for (const ApiCall& call : calls) trace.AddCall(call);
    std::stable_sort(trace.probe_events.begin(), trace.probe_events.end(),
                     [](const trace::ProbeEvent& a, const trace::ProbeEvent& b) { return a.time_ns < b.time_ns; });
    return trace;
  }

 private:
  trace::Trace trace_;
  std::deque<ApiCall> calls_;  // stable references for the callers that fill in fields after Call()
  uint64_t correlation_ = 0;
};

// Frames of Tensor.item() as a symbolized backtrace shows them, innermost first.
inline std::vector<std::string> ItemFrames() {
  return {"cudaStreamSynchronize",
          "at::native::_local_scalar_dense_cuda(at::Tensor const&)",
          "at::_ops::_local_scalar_dense::call(at::Tensor const&)",
          "at::native::item(at::Tensor const&)",
          "at::_ops::item::call(at::Tensor const&)",
          "THPVariable_item",
          "train.py:42 train_step"};
}

// Runs `check` on `trace` analyzed with `settings` (the steps and launch model the command line would give).
inline std::vector<Finding> RunCheck(const Check& check, const trace::Trace& trace,
                                     const analysis::AnalysisSettings& settings, const CheckOptions& options = {}) {
  const analysis::TraceAnalysis analysis(trace, settings);
  CheckInputs inputs;
  analysis::AddTrace(analysis, &inputs);
  std::vector<Finding> findings;
  check.Run(inputs, BoundOptions(check.info(), options), &findings);
  return findings;
}

inline std::vector<Finding> RunCheck(const Check& check, const trace::Trace& trace, const CheckOptions& options = {}) {
  return RunCheck(check, trace, analysis::AnalysisSettings(), options);
}

inline std::vector<Finding> RunCheck(const std::unique_ptr<Check>& check, const trace::Trace& trace,
                                     const CheckOptions& options = {}) {
  return RunCheck(*check, trace, options);
}

inline std::vector<Finding> RunCheck(const std::unique_ptr<Check>& check, const trace::Trace& trace,
                                     const analysis::AnalysisSettings& settings, const CheckOptions& options = {}) {
  return RunCheck(*check, trace, settings, options);
}

// Eager steps: each `step_ns` long, launching `kernels` (name, grid x) back to back on stream 7 from thread 1, each
// kernel running `kernel_ns` after a `delay_ns` launch delay. Kernel launches are 1 us apart.
struct StepKernel {
  std::string name;
  uint32_t grid_x = 1;
};
inline void EagerSteps(TraceBuilder* b, uint64_t t0, int steps, uint64_t step_ns,
                       const std::vector<StepKernel>& kernels, uint64_t delay_ns = 5000, uint64_t kernel_ns = 2000) {
  for (int s = 0; s < steps; ++s) {
    uint64_t t = t0 + s * step_ns;
    for (const StepKernel& k : kernels) {
      b->LaunchAndRun(t, 1, 7, k.name, delay_ns, kernel_ns, {k.grid_x, 1, 1});
      t += 1000;
    }
  }
}

}  // namespace graphcheck::testing_trace

#endif  // GRAPHCHECK_TESTS_CHECKS_TRACE_TRACE_BUILDER_H_
