// Analysis throughput and memory: every built-in check and the launch metrics over a synthetic trace of 10 M events
// (API calls, kernel and memory activity, NVTX), shaped like a launch-bound training loop with captures and replays,
// written by TraceWriter to a real trace file and read back as `graphcheck analyze` reads it. Reports events/s
// (target: >= 5 M/s on one core), the file's size and the process's peak resident memory.
//
// `analysis_bench --write-trace PATH` only writes the file, for measuring `graphcheck analyze PATH` in a process of
// its own (bench/analysis_memory.sh: peak memory against the trace size, target <= 2x).
#include <benchmark/benchmark.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "analysis/capture_windows.h"
#include "analysis/launch_metrics.h"
#include "analysis/trace_analysis.h"
#include "checks/analyze.h"
#include "cli/catalog.h"
#include "trace/events.h"
#include "trace/trace_reader.h"
#include "trace/trace_writer.h"

namespace graphcheck {
namespace {

using trace::ApiCallRecord;
using trace::ApiKind;

constexpr size_t kTargetEvents = 10'000'000;
constexpr int kKernelsPerStep = 200;

size_t EventCount(const trace::Trace& t) {
  return t.api_calls.size() + t.kernels.size() + t.memory.size() + t.graph_launches.size() + t.nvtx.size();
}

// Steps of kKernelsPerStep launches (each with its kernel record), a few copies, one .item() synchronization, NVTX
// step ranges; every 50th step is captured and followed by replays.
absl::Status WriteSyntheticTrace(const std::string& path) {
  trace::ProcessInfo process;
  process.pid = 1;
  absl::StatusOr<std::unique_ptr<trace::TraceWriter>> created = trace::TraceWriter::Create(path, process);
  if (!created.ok()) return created.status();
  trace::TraceWriter& w = **created;
  std::vector<trace::StringId> names;
  for (int k = 0; k < kKernelsPerStep; ++k) names.push_back(w.InternString("kernel_" + std::to_string(k % 64)));
  const trace::StringId launch = w.InternString("cudaLaunchKernel");
  const trace::StringId copy = w.InternString("cudaMemcpyAsync");
  const trace::StringId sync = w.InternString("cudaStreamSynchronize");
  const trace::StringId begin = w.InternString("cudaStreamBeginCapture");
  const trace::StringId end = w.InternString("cudaStreamEndCapture");
  const trace::StringId replay = w.InternString("cudaGraphLaunch");
  const trace::StringId step = w.InternString("train_step");
  const trace::BacktraceId item =
      w.AddBacktrace({sync, w.InternString("at::native::_local_scalar_dense_cuda"), w.InternString("train.py:10")});
  uint64_t now = 1'000'000;
  uint64_t correlation = 0;
  uint64_t capture_id = 0;
  size_t events = 0;
  auto call = [&](trace::StringId name, ApiKind kind) {
    ApiCallRecord c;
    c.correlation_id = ++correlation;
    c.start_ns = now;
    c.end_ns = now + 800;
    now += 1000;
    c.thread_id = 1;
    c.name = name;
    c.kind = kind;
    c.stream_id = 7;
    return c;
  };
  auto write = [&](const ApiCallRecord& c) {
    w.WriteApiCall(c);
    ++events;
  };
  for (int s = 0; events < kTargetEvents; ++s) {
    const bool captured = s % 50 == 49;
    w.WriteNvtx({trace::NvtxEvent::Kind::kPush, 1, now, 0, step, 0});
    ++events;
    if (captured) {
      ApiCallRecord b = call(begin, ApiKind::kCaptureBegin);
      b.capture_mode = trace::CaptureMode::kThreadLocal;
      write(b);
      ++capture_id;
    }
    for (int k = 0; k < kKernelsPerStep; ++k) {
      ApiCallRecord c = call(launch, ApiKind::kKernelLaunch);
      c.kernel_name = names[k];
      c.grid = {128, 1, 1};
      if (captured) {
        c.capture_status = trace::CaptureStatus::kActive;
        c.capture_id = capture_id;
        write(c);
        continue;
      }
      write(c);
      trace::KernelRecord kernel;
      kernel.correlation_id = c.correlation_id;
      kernel.start_ns = c.start_ns + 5000;
      kernel.end_ns = kernel.start_ns + 700;
      kernel.stream_id = 7;
      kernel.name = names[k];
      kernel.grid = c.grid;
      w.WriteKernel(kernel);
      ++events;
      if (k % 50 == 0) {
        ApiCallRecord m = call(copy, ApiKind::kMemcpyAsync);
        m.bytes = 4096;
        m.host_memory = trace::HostMemory::kPinned;
        write(m);
        trace::MemoryActivity activity;
        activity.correlation_id = m.correlation_id;
        activity.start_ns = m.start_ns + 3000;
        activity.end_ns = activity.start_ns + 500;
        w.WriteMemory(activity);
        ++events;
      }
    }
    if (captured) {
      ApiCallRecord e = call(end, ApiKind::kCaptureEnd);
      e.capture_status = trace::CaptureStatus::kActive;
      e.capture_id = capture_id;
      e.node_count = kKernelsPerStep;
      e.graph_id = capture_id;
      write(e);
      for (int r = 0; r < 3; ++r) {
        ApiCallRecord g = call(replay, ApiKind::kGraphLaunch);
        g.graph_id = capture_id;
        write(g);
        w.WriteGraphLaunch(
            {g.correlation_id, g.start_ns + 3000, g.start_ns + 150000, 0, 7, static_cast<uint32_t>(capture_id)});
        ++events;
      }
    } else {
      ApiCallRecord s = call(sync, ApiKind::kStreamSynchronize);
      s.backtrace = item;
      write(s);
    }
    w.WriteNvtx({trace::NvtxEvent::Kind::kPop, 1, now, 0, 0, 0});
    ++events;
  }
  return absl::OkStatus();
}

std::string& TracePath() {
  static std::string path;
  return path;
}

// The synthetic trace, written once and read back as graphcheck reads a trace file.
const trace::Trace& SyntheticTrace() {
  static const trace::Trace* const kTrace = [] {
    absl::StatusOr<trace::Trace> read = trace::ReadTrace(TracePath());
    if (!read.ok()) {
      std::fprintf(stderr, "%s\n", std::string(read.status().message()).c_str());
      std::exit(1);
    }
    return new trace::Trace(*std::move(read));
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
  state.counters["in_memory_MiB"] =
      (t.api_calls.size() * sizeof(trace::ApiCall) + t.kernels.size() * sizeof(trace::KernelActivity) +
       t.memory.size() * sizeof(trace::MemoryActivity) + t.nvtx.size() * sizeof(trace::NvtxEvent) +
       t.call_details.size() * sizeof(trace::CallDetail) + t.kernel_shapes.size() * sizeof(trace::KernelShape)) /
      (1024.0 * 1024.0);
  state.counters["peak_rss_MiB"] = PeakRssMiB();
}

void BM_ReadTrace(benchmark::State& state) {
  trace::TraceFileStats stats;
  size_t events = 0;
  for (auto _ : state) {
    absl::StatusOr<trace::Trace> read = trace::ReadTrace(TracePath(), &stats);
    events = read.ok() ? EventCount(*read) : 0;
    benchmark::DoNotOptimize(read);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * events));
  state.counters["file_MiB"] = stats.file_bytes / (1024.0 * 1024.0);
  state.counters["peak_rss_MiB"] = PeakRssMiB();
}
BENCHMARK(BM_ReadTrace)->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_AllAnalyzers(benchmark::State& state) {
  const trace::Trace& t = SyntheticTrace();
  state.counters["rss_before_MiB"] = PeakRssMiB();
  for (auto _ : state) {
    checks::AnalysisResult result =
        checks::AnalyzeTraces({&t}, nullptr, BuiltinChecks(), CheckSelection(), CheckOptions());
    benchmark::DoNotOptimize(result);
  }
  ReportCounters(state, t);
}
BENCHMARK(BM_AllAnalyzers)->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_CaptureWindows(benchmark::State& state) {
  const trace::Trace& t = SyntheticTrace();
  for (auto _ : state) {
    analysis::CaptureAnalysis captures(t);
    benchmark::DoNotOptimize(captures);
  }
  ReportCounters(state, t);
}
BENCHMARK(BM_CaptureWindows)->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_LaunchStats(benchmark::State& state) {
  const trace::Trace& t = SyntheticTrace();
  for (auto _ : state) {
    const analysis::TraceAnalysis analysis(t);
    benchmark::DoNotOptimize(
        analysis::ComputeLaunchStats(analysis, analysis::IterationOptions(), analysis::LaunchModel()));
  }
  ReportCounters(state, t);
}
BENCHMARK(BM_LaunchStats)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace
}  // namespace graphcheck

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "--write-trace") == 0) {
    const absl::Status written = graphcheck::WriteSyntheticTrace(argv[2]);
    if (!written.ok()) std::fprintf(stderr, "%s\n", std::string(written.message()).c_str());
    return written.ok() ? 0 : 1;
  }
  graphcheck::TracePath() = "/tmp/graphcheck-analysis-bench-" + std::to_string(getpid()) + ".gctrace";
  if (const absl::Status written = graphcheck::WriteSyntheticTrace(graphcheck::TracePath()); !written.ok()) {
    std::fprintf(stderr, "%s\n", std::string(written.message()).c_str());
    return 1;
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  std::remove(graphcheck::TracePath().c_str());
  return 0;
}
