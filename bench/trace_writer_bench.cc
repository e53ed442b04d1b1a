// Cost of recording: ns per TraceWriter append (API call, kernel activity, a repeated string intern) on one thread and
// on four threads sharing a writer, and reader throughput in events/s. The recorder's budget is <= 5% on a step with
// ~42 kernel launches per 300 us, i.e. well under 1 us of recording per launch. Results: bench/results/.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <string>

#include "trace/trace_reader.h"
#include "trace/trace_writer.h"

namespace graphcheck::trace {
namespace {

std::string BenchPath(const char* name) {
  const char* dir = std::getenv("TMPDIR");
  return std::string(dir != nullptr ? dir : "/tmp") + "/graphcheck_bench_" + name + "_" + std::to_string(getpid()) +
         ".gctrace";
}

ProcessInfo Process() {
  ProcessInfo p;
  p.pid = static_cast<uint32_t>(getpid());
  p.command_line = {"trace_writer_bench"};
  return p;
}

// What the recorder writes for a kernel launch on a launch-bound step: ~7 us apart, a few us long.
ApiCallRecord Launch(uint64_t i, uint32_t thread, StringId name, StringId kernel) {
  ApiCallRecord c;
  c.correlation_id = i;
  c.start_ns = 1'700'000'000'000'000'000ull + i * 7'000;
  c.end_ns = c.start_ns + 3'500;
  c.thread_id = thread;
  c.name = name;
  c.kind = ApiKind::kKernelLaunch;
  c.callback_id = 211;
  c.stream_id = 7;
  c.kernel_name = kernel;
  c.grid = {128, 1, 1};
  c.block = {256, 1, 1};
  return c;
}

KernelRecord Kernel(uint64_t i, StringId name) {
  KernelRecord k;
  k.correlation_id = i;
  k.start_ns = 1'700'000'000'000'010'000ull + i * 7'000;
  k.end_ns = k.start_ns + 5'000;
  k.stream_id = 7;
  k.name = name;
  k.grid = {128, 1, 1};
  k.block = {256, 1, 1};
  return k;
}

// One writer shared by all benchmark threads, with the ids of the strings the records use. Thread 0 sets it up before
// the timing loop's start barrier and tears it down after its end barrier; other threads touch it only in the loop.
struct Shared {
  std::unique_ptr<TraceWriter> writer;
  StringId api = 0;
  StringId kernel = 0;
};
Shared g;

void SetUp(benchmark::State& state, const char* name) {
  if (state.thread_index() != 0) return;
  g.writer = *TraceWriter::Create(BenchPath(name), Process());
  g.api = g.writer->InternString("cudaLaunchKernel");
  g.kernel = g.writer->InternString("void at::native::vectorized_elementwise_kernel<4>(int)");
}

void TearDown(benchmark::State& state) {
  if (state.thread_index() != 0) return;
  state.counters["bytes_per_record"] =
      static_cast<double>(g.writer->bytes_written()) / static_cast<double>(g.writer->records_written());
  std::remove(g.writer->path().c_str());
  g.writer.reset();
}

void BM_WriteApiCall(benchmark::State& state) {
  SetUp(state, "api");
  uint64_t i = 0;
  for (auto _ : state) g.writer->WriteApiCall(Launch(++i, state.thread_index(), g.api, g.kernel));
  state.SetItemsProcessed(state.iterations());
  TearDown(state);
}
BENCHMARK(BM_WriteApiCall)->Threads(1)->Threads(4)->UseRealTime();

void BM_WriteKernel(benchmark::State& state) {
  SetUp(state, "kernel");
  uint64_t i = 0;
  for (auto _ : state) g.writer->WriteKernel(Kernel(++i, g.kernel));
  state.SetItemsProcessed(state.iterations());
  TearDown(state);
}
BENCHMARK(BM_WriteKernel)->Threads(1)->Threads(4)->UseRealTime();

// The recorder interns each launch's kernel name (a repeated string: the per-thread cache hit).
void BM_InternRepeatedKernelName(benchmark::State& state) {
  SetUp(state, "intern");
  const std::string names[4] = {"void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>>(int)",
                                "ampere_sgemm_128x64_tn", "void cunn_SoftMaxForward<4, float>(float*, float const*)",
                                "void at::native::reduce_kernel<512, 1>(at::native::ReduceOp<float>)"};
  uint64_t i = 0;
  for (auto _ : state) benchmark::DoNotOptimize(g.writer->InternString(names[++i % 4]));
  state.SetItemsProcessed(state.iterations());
  TearDown(state);
}
BENCHMARK(BM_InternRepeatedKernelName)->Threads(1)->Threads(4)->UseRealTime();

void BM_ReadTrace(benchmark::State& state) {
  const int64_t launches = state.range(0);
  const std::string path = BenchPath("read");
  {
    auto writer = *TraceWriter::Create(path, Process());
    const StringId name = writer->InternString("cudaLaunchKernel");
    for (int64_t i = 0; i < launches; ++i) {
      const StringId kernel = writer->InternString("kernel_" + std::to_string(i % 64));
      writer->WriteApiCall(Launch(i, 1, name, kernel));
      writer->WriteKernel(Kernel(i, kernel));
    }
  }
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), {});
  std::remove(path.c_str());
  for (auto _ : state) {
    absl::StatusOr<Trace> trace = ReadTraceFromBytes(bytes);
    benchmark::DoNotOptimize(trace);
  }
  state.SetItemsProcessed(state.iterations() * launches * 2);
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(bytes.size()));
}
BENCHMARK(BM_ReadTrace)->Arg(1'000'000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace graphcheck::trace

BENCHMARK_MAIN();
