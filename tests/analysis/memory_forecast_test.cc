// The memory forecast: the caching-allocator model on hand-made histories, and the forecast as launch-bound reports it.
#include "analysis/memory_forecast.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "analysis/trace_analysis.h"
#include "checks/checks.h"
#include "tests/checks/trace/launch_test_util.h"

namespace graphcheck::testing_trace {
namespace {

using analysis::ForecastCapturesIntoOnePool;
using analysis::ForecastPool;
using analysis::PoolForecast;
using analysis::TimeInterval;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::SizeIs;
using trace::AllocatorEvent;

constexpr uint64_t kMiB = 1 << 20;

AllocatorEvent Alloc(uint64_t t, uint64_t address, uint64_t bytes) {
  return {AllocatorEvent::Action::kAlloc, 0, t, address, bytes};
}
AllocatorEvent Free(uint64_t t, uint64_t address, uint64_t bytes) {
  return {AllocatorEvent::Action::kFree, 0, t, address, bytes};
}

TEST(ForecastPoolTest, SmallRequestsShareTwoMiBSegmentsRoundedTo512Bytes) {
  const PoolForecast pool = ForecastPool({Alloc(10, 0xa000, 4000), Alloc(20, 0xb000, 100)}, {{0, 100, 1}});
  EXPECT_EQ(pool.pool_bytes, 2 * kMiB);
  EXPECT_EQ(pool.live_peak_bytes, 4096u + 512u);
  EXPECT_EQ(pool.outliving_bytes, 4096u + 512u);
}

TEST(ForecastPoolTest, LargeRequestsSplitTwentyMiBSegmentsAndHugeOnesGetTheirOwn) {
  // Two 8 MiB blocks fit one 20 MiB segment (the 4 MiB left is kept apart); a third needs another.
  EXPECT_EQ(ForecastPool({Alloc(1, 0x1, 8 * kMiB), Alloc(2, 0x2, 8 * kMiB)}, {{0, 10, 1}}).pool_bytes, 20 * kMiB);
  EXPECT_EQ(ForecastPool({Alloc(1, 0x1, 8 * kMiB), Alloc(2, 0x2, 8 * kMiB), Alloc(3, 0x3, 8 * kMiB)}, {{0, 10, 1}})
                .pool_bytes,
            40 * kMiB);
  // 11 MiB and a byte: a segment of its own, rounded up to 2 MiB.
  EXPECT_EQ(ForecastPool({Alloc(1, 0x1, 11 * kMiB + 1)}, {{0, 10, 1}}).pool_bytes, 12 * kMiB);
}

TEST(ForecastPoolTest, FreedBlocksAreReusedAndMerged) {
  // Two 8 MiB blocks freed merge with the rest of their segment, which then serves a 16 MiB request.
  const PoolForecast pool = ForecastPool({Alloc(1, 0x1, 8 * kMiB), Alloc(2, 0x2, 8 * kMiB), Free(3, 0x1, 8 * kMiB),
                                          Free(4, 0x2, 8 * kMiB), Alloc(5, 0x3, 16 * kMiB)},
                                         {{0, 10, 1}});
  EXPECT_EQ(pool.pool_bytes, 20 * kMiB);
  EXPECT_EQ(pool.live_peak_bytes, 16 * kMiB);
  EXPECT_EQ(pool.outliving_bytes, 16 * kMiB);
}

TEST(ForecastPoolTest, OnlyTheRegionsOwnAllocationsCount) {
  // Allocated before the region (parameters, the previous step's outputs) and freed in it: not the pool's. Allocated
  // after it: not captured.
  const PoolForecast pool = ForecastPool(
      {Alloc(1, 0x1, 64 * kMiB), Free(15, 0x1, 64 * kMiB), Alloc(20, 0x2, 4000), Alloc(40, 0x3, 64 * kMiB)},
      {{10, 30, 1}});
  EXPECT_EQ(pool.pool_bytes, 2 * kMiB);
  EXPECT_EQ(pool.live_peak_bytes, 4096u);
}

// Two regions, each with a 30 MiB temporary and a 1 MiB output it keeps: each in its own pool 32 MiB; sharing one, the
// second reuses the first's freed temporary and the rest of its small segment.
std::vector<AllocatorEvent> TwoRegions(uint64_t t) {
  return {Alloc(t + 1, 0x10, 30 * kMiB),  Free(t + 2, 0x10, 30 * kMiB),  Alloc(t + 3, 0x20, kMiB),
          Alloc(t + 11, 0x30, 30 * kMiB), Free(t + 12, 0x30, 30 * kMiB), Alloc(t + 13, 0x40, kMiB)};
}

TEST(ForecastPoolTest, ASharedPoolReusesWhatEarlierRegionsFreed) {
  const std::vector<TimeInterval> regions = {{0, 10, 1}, {10, 20, 1}};
  const PoolForecast shared = ForecastPool(TwoRegions(0), regions);
  EXPECT_EQ(shared.pool_bytes, 32 * kMiB);
  EXPECT_EQ(shared.outliving_bytes, 2 * kMiB);
  EXPECT_EQ(ForecastPool(TwoRegions(0), {regions[0]}).pool_bytes + ForecastPool(TwoRegions(0), {regions[1]}).pool_bytes,
            64 * kMiB);
}

// Two graphs captured into one pool: a large one (a 30 MiB temporary, a 1 MiB output) and a small one (20 MiB, 1 MiB).
// Largest first, the small one's temporary fits the block the large one freed; the other way round it does not. Each
// keeps its output.
TEST(ForecastPoolTest, CapturesIntoOnePoolReuseWhatEarlierCapturesFreedInTheirOrder) {
  const std::vector<AllocatorEvent> events = {Alloc(1, 0x10, 30 * kMiB), Free(2, 0x10, 30 * kMiB),
                                              Alloc(3, 0x20, kMiB),      Alloc(11, 0x30, 20 * kMiB),
                                              Free(12, 0x30, 20 * kMiB), Alloc(13, 0x40, kMiB)};
  const TimeInterval large{0, 10, 1};
  const TimeInterval small{10, 20, 1};
  const PoolForecast largest_first = ForecastCapturesIntoOnePool(events, {large, small});
  EXPECT_EQ(largest_first.pool_bytes, 32 * kMiB);
  EXPECT_EQ(largest_first.outliving_bytes, 2 * kMiB);
  const PoolForecast smallest_first = ForecastCapturesIntoOnePool(events, {small, large});
  EXPECT_EQ(smallest_first.pool_bytes, 52 * kMiB);
  EXPECT_EQ(smallest_first.outliving_bytes, 2 * kMiB);
}

// LaunchBoundTrace's steps (100 us each, from t = 1 ms) with a 30 MiB temporary and a 1 MiB output in each.
trace::Trace LaunchBoundTraceWithHistory() {
  trace::Trace trace = LaunchBoundTrace(1000);
  for (uint64_t s = 0; s < 7; ++s) {
    const uint64_t t = 1000000 + s * 100000;
    trace.allocations.push_back(Alloc(t + 1000, 0x1000 + s * 0x100, 30 * kMiB));
    trace.allocations.push_back(Free(t + 50000, 0x1000 + s * 0x100, 30 * kMiB));
    trace.allocations.push_back(Alloc(t + 60000, 0x9000 + s * 0x100, kMiB));
  }
  return trace;
}

TEST(MemoryForecastTest, LaunchBoundSaysWhatTheGraphWouldHold) {
  const std::vector<Finding> findings = RunCheck(checks::NewLaunchBoundCheck(), LaunchBoundTraceWithHistory());
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].evidence,
              Contains(HasSubstr("memory: a graph of the step would hold a private pool of about 32 MiB: 32 MiB for "
                                 "the step's own allocations (they peak at 30 MiB live; 1 MiB of them are still held "
                                 "at its end: outputs and gradients); forecast from the caching allocator's history "
                                 "of 5 eager steps")));
}

// A step that runs cuBLAS kernels: the graph's pool also gets the workspace of its capture stream, one per thread that
// launches them (an H100's training step: 2 x 32 MiB, the forward's thread and autograd's).
TEST(MemoryForecastTest, CublasStepsAddAWorkspacePerLaunchingThread) {
  trace::Trace trace = LaunchBoundTraceWithHistory();
  const trace::StringId gemm = trace.Intern("sm90_xmma_gemm_f32f32_f32f32_f32_tn_n_cublas");
  for (trace::KernelShape& shape : trace.kernel_shapes) shape.name = gemm;
  trace::DeviceInfo device;
  device.gpu.cc_major = 9;
  trace.devices.push_back(device);
  std::vector<Finding> findings = RunCheck(checks::NewLaunchBoundCheck(), trace);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].evidence,
              Contains(HasSubstr("private pool of about 64 MiB: 32 MiB for the step's own allocations (they peak at "
                                 "30 MiB live; 1 MiB of them are still held at its end: outputs and gradients) and "
                                 "32 MiB of cuBLAS workspaces")));
  bool other_thread = false;  // every other launch from a second thread, as a backward's from autograd's
  for (trace::ApiCall& call : trace.api_calls) {
    if (call.kind != trace::ApiKind::kKernelLaunch) continue;
    if (other_thread) call.thread_id = 99;
    other_thread = !other_thread;
  }
  findings = RunCheck(checks::NewLaunchBoundCheck(), trace);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].evidence, Contains(HasSubstr("private pool of about 96 MiB")));
  EXPECT_THAT(findings[0].evidence, Contains(HasSubstr("and 64 MiB of cuBLAS workspaces")));
}

// Where the steps' launches were not recorded, their cuBLAS kernels still say a thread launched them: one workspace.
TEST(MemoryForecastTest, CublasKernelsWithoutTheirLaunchesCountOneWorkspace) {
  const trace::Trace recorded = LaunchBoundTraceWithHistory();
  trace::Trace kernels_only = recorded;
  const trace::StringId gemm = kernels_only.Intern("sm90_xmma_gemm_f32f32_f32f32_f32_tn_n_cublas");
  for (trace::KernelShape& shape : kernels_only.kernel_shapes) shape.name = gemm;
  kernels_only.devices.emplace_back().gpu.cc_major = 9;
  for (trace::KernelActivity& kernel : kernels_only.kernels) kernel.correlation_id += 1000000;  // no launch names them
  const analysis::TraceAnalysis analysis(kernels_only);
  const std::vector<TimeInterval> steps = {{1000000, 1700000, 0}};
  EXPECT_EQ(analysis::CublasWorkspaceBytes(analysis, steps), 32 * kMiB);
  const analysis::TraceAnalysis without(recorded);  // no cuBLAS kernel
  EXPECT_EQ(analysis::CublasWorkspaceBytes(without, steps), 0u);
}

TEST(MemoryForecastTest, NoHistoryNoMemoryLine) {
  const std::vector<Finding> findings = RunCheck(checks::NewLaunchBoundCheck(), LaunchBoundTrace(1000));
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].evidence, Not(Contains(HasSubstr("memory:"))));
}

TEST(MemoryForecastTest, GraphableRangesAreForecastSharedAndPrivate) {
  TraceBuilder b;
  std::vector<AllocatorEvent> history;
  for (uint64_t s = 0; s < 6; ++s) {
    const uint64_t t = 1000000 + s * 1000;
    b.Push(t, 1, "step");
    b.LaunchAndRun(t + 1, 1, 7, "k", 1, 1);
    b.Push(t + 100, 1, "graphcheck:graphable");
    b.Pop(t + 110, 1);
    b.Push(t + 200, 1, "graphcheck:graphable");
    b.Pop(t + 210, 1);
    b.Pop(t + 900, 1);
    for (AllocatorEvent event : TwoRegions(0)) {
      event.time_ns += t + (event.time_ns < 10 ? 100 : 190);
      event.address += s << 16;
      history.push_back(event);
    }
  }
  trace::Trace trace = b.Build();
  trace.allocations = history;
  analysis::TraceAnalysis analysis(trace);
  analysis::IterationOptions steps;
  steps.region = "step";
  const std::optional<analysis::MemoryForecast> forecast =
      analysis::ForecastGraphMemory(analysis, steps, analysis::LaunchModel());
  ASSERT_TRUE(forecast.has_value());
  EXPECT_EQ(forecast->steps, 5u);  // the step range leaves out the first
  EXPECT_EQ(forecast->parts, 2u);
  EXPECT_EQ(forecast->pool.pool_bytes, 32 * kMiB);
  EXPECT_EQ(forecast->private_pools_bytes, 64 * kMiB);
  const std::vector<Metric> metrics = analysis::MemoryForecastMetrics(*forecast);
  EXPECT_THAT(metrics, Contains(::testing::Field(&Metric::name, "memory.forecast_private_pools_bytes")));
}

}  // namespace
}  // namespace graphcheck::testing_trace
