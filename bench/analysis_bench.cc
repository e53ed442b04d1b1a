// Analysis throughput: every built-in check and the launch metrics over a synthetic trace of 10 M events (API calls,
// kernel and memory activity, NVTX), shaped like a launch-bound training loop with captures and replays. Reports
// events/s (target: >= 5 M/s on one core, DESIGN.md) and the process's peak resident memory.
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <string>
#include <vector>

#include "analyzers/analyze.h"
#include "analyzers/capture_windows.h"
#include "analyzers/launch_metrics.h"
#include "analyzers/trace_analysis.h"
#include "cli/catalog.h"
#include "core/trace/events.h"

namespace graphcheck {
namespace {

using trace::ApiCall;
using trace::ApiKind;

constexpr size_t kTargetEvents = 10'000'000;
constexpr int kKernelsPerStep = 200;

size_t EventCount(const trace::Trace& t) {
  return t.api_calls.size() + t.kernels.size() + t.memory.size() + t.graph_launches.size() + t.nvtx.size();
}

// Steps of kKernelsPerStep launches (each with its kernel record), a few copies, one .item() synchronization, NVTX
// step ranges; every 50th step is captured and followed by replays.
const trace::Trace& SyntheticTrace() {
  static const trace::Trace* const kTrace = [] {
    auto* t = new trace::Trace();
    t->process.pid = 1;
    std::vector<trace::StringId> names;
    for (int k = 0; k < kKernelsPerStep; ++k) names.push_back(t->Intern("kernel_" + std::to_string(k % 64)));
    const trace::StringId copy = t->Intern("cudaMemcpyAsync");
    const trace::StringId sync = t->Intern("cudaStreamSynchronize");
    const trace::StringId begin = t->Intern("cudaStreamBeginCapture");
    const trace::StringId end = t->Intern("cudaStreamEndCapture");
    const trace::StringId replay = t->Intern("cudaGraphLaunch");
    const trace::StringId step = t->Intern("train_step");
    t->backtraces.push_back({{sync, t->Intern("at::native::_local_scalar_dense_cuda"), t->Intern("train.py:10")}});
    uint64_t now = 1'000'000;
    uint64_t correlation = 0;
    uint64_t capture_id = 0;
    auto call = [&](trace::StringId name, ApiKind kind) -> ApiCall& {
      ApiCall c;
      c.correlation_id = ++correlation;
      c.start_ns = now;
      c.end_ns = now + 800;
      now += 1000;
      c.thread_id = 1;
      c.name = name;
      c.kind = kind;
      c.stream_id = 7;
      t->api_calls.push_back(c);
      return t->api_calls.back();
    };
    for (int s = 0; EventCount(*t) < kTargetEvents; ++s) {
      const bool captured = s % 50 == 49;
      t->nvtx.push_back({trace::NvtxEvent::Kind::kPush, 1, now, 0, step, 0});
      if (captured) {
        call(begin, ApiKind::kCaptureBegin).capture_mode = trace::CaptureMode::kThreadLocal;
        ++capture_id;
      }
      for (int k = 0; k < kKernelsPerStep; ++k) {
        ApiCall& c = call(names[k], ApiKind::kKernelLaunch);
        c.kernel_name = names[k];
        c.grid = {128, 1, 1};
        if (captured) {
          c.capture_status = trace::CaptureStatus::kActive;
          c.capture_id = capture_id;
          continue;
        }
        trace::KernelActivity kernel;
        kernel.correlation_id = c.correlation_id;
        kernel.start_ns = c.start_ns + 5000;
        kernel.end_ns = kernel.start_ns + 700;
        kernel.stream_id = 7;
        kernel.name = names[k];
        t->kernels.push_back(kernel);
        if (k % 50 == 0) {
          ApiCall& m = call(copy, ApiKind::kMemcpyAsync);
          m.bytes = 4096;
          m.host_memory = trace::HostMemory::kPinned;
          trace::MemoryActivity activity;
          activity.correlation_id = m.correlation_id;
          activity.start_ns = m.start_ns + 3000;
          activity.end_ns = activity.start_ns + 500;
          t->memory.push_back(activity);
        }
      }
      if (captured) {
        ApiCall& e = call(end, ApiKind::kCaptureEnd);
        e.capture_status = trace::CaptureStatus::kActive;
        e.capture_id = capture_id;
        e.node_count = kKernelsPerStep;
        e.graph_id = capture_id;
        for (int r = 0; r < 3; ++r) {
          ApiCall& g = call(replay, ApiKind::kGraphLaunch);
          g.graph_id = capture_id;
          t->graph_launches.push_back(
              {g.correlation_id, g.start_ns + 3000, g.start_ns + 150000, 0, 7, static_cast<uint32_t>(capture_id)});
        }
      } else {
        call(sync, ApiKind::kStreamSynchronize).backtrace = 1;
      }
      t->nvtx.push_back({trace::NvtxEvent::Kind::kPop, 1, now, 0, 0, 0});
    }
    return t;
  }();
  return *kTrace;
}

double PeakRssMiB() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss / 1024.0;  // Linux: KiB
}

void ReportCounters(benchmark::State& state, const trace::Trace& t) {
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * EventCount(t)));
  state.counters["events"] = static_cast<double>(EventCount(t));
  state.counters["trace_MiB"] =
      (t.api_calls.size() * sizeof(trace::ApiCall) + t.kernels.size() * sizeof(trace::KernelActivity) +
       t.memory.size() * sizeof(trace::MemoryActivity) + t.nvtx.size() * sizeof(trace::NvtxEvent)) /
      (1024.0 * 1024.0);
  state.counters["peak_rss_MiB"] = PeakRssMiB();
}

void BM_AllAnalyzers(benchmark::State& state) {
  const trace::Trace& t = SyntheticTrace();
  state.counters["rss_before_MiB"] = PeakRssMiB();
  for (auto _ : state) {
    analyzers::AnalysisResult result =
        analyzers::AnalyzeTraces({&t}, nullptr, BuiltinChecks(), CheckSelection(), CheckOptions());
    benchmark::DoNotOptimize(result);
  }
  ReportCounters(state, t);
}
BENCHMARK(BM_AllAnalyzers)->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_CaptureWindows(benchmark::State& state) {
  const trace::Trace& t = SyntheticTrace();
  for (auto _ : state) {
    analyzers::CaptureAnalysis captures(t);
    benchmark::DoNotOptimize(captures);
  }
  ReportCounters(state, t);
}
BENCHMARK(BM_CaptureWindows)->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_LaunchStats(benchmark::State& state) {
  const trace::Trace& t = SyntheticTrace();
  for (auto _ : state) {
    const analyzers::TraceAnalysis analysis(t);
    benchmark::DoNotOptimize(
        analyzers::ComputeLaunchStats(analysis, analyzers::IterationOptions(), analyzers::LaunchModel()));
  }
  ReportCounters(state, t);
}
BENCHMARK(BM_LaunchStats)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace
}  // namespace graphcheck

BENCHMARK_MAIN();
