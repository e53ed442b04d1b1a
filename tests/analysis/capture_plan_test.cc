// graphcheck plan (analysis/capture_plan.h): module calls of varying batch sizes, built as the probe and the recorder
// record them, planned into bucket sets.
#include "analysis/capture_plan.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "tests/checks/trace/trace_builder.h"

namespace graphcheck::analysis {
namespace {

using ::testing::HasSubstr;

// Calls of one module, one per batch size in `batches`, each launching `kernels` kernels that take `us_per_row`
// microseconds per row of the batch (plus 2 us), 8 us of host time per launch: 2 us + 8 us per launch in all. The
// end events say the probe's hooks added `hooks_ns` to each of `nested` module calls inside.
trace::Trace ServingTrace(const std::vector<int>& batches, int kernels = 6, double us_per_row = 0.1,
                          uint64_t nested = 0, uint64_t hooks_ns = 0) {
  testing_trace::TraceBuilder b;
  const trace::PythonStackId site = b.PythonStack({{"serve.py", 10, "serve"}});
  uint64_t t = 1'000'000;
  for (size_t i = 0; i < batches.size(); ++i) {
    b.Probe(t, 1, trace::ProbeEventKind::kModuleCallBegin, 77).value = i + 1;
    b.trace().probe_events.back().stack = site;
    uint64_t at = t + 1'000;
    for (int k = 0; k < kernels; ++k) {
      const auto duration = static_cast<uint64_t>((2 + us_per_row * batches[i]) * 1e3);
      b.LaunchAndRun(at, 1, 7, "gemm", 3'000, duration).end_ns = at + 8'000;
      at += 8'000;
    }
    trace::ProbeEvent& end = b.Probe(at + 1'000, 1, trace::ProbeEventKind::kModuleCallEnd, 77);
    end.value = i + 1;
    end.pool = nested;
    end.value_now = hooks_ns;
    end.text = b.Intern(absl::StrCat("Net\t0=", batches[i], "x64\tmask=", batches[i], "x", 16 + i % 2));
    t = at + 50'000;
  }
  return b.Build();
}

// Batch sizes 1..64 as a serving queue gives them: the small ones often, every one at least once; and one outlier
// of 500.
std::vector<int> QueueBatches() {
  std::vector<int> batches;
  for (int round = 0; round < 4; ++round) {
    for (int size = 1; size <= 64; ++size) {
      for (int repeat = 0; repeat < (size <= 8 ? 3 : 1); ++repeat) batches.push_back(size);
    }
  }
  batches.push_back(500);
  return batches;
}

CapturePlan Plan(const trace::Trace& trace) {
  absl::StatusOr<CapturePlan> plan = PlanCaptures({&trace}, PlanModel());
  EXPECT_TRUE(plan.ok()) << plan.status();
  return plan.ok() ? *plan : CapturePlan();
}

// The probe's global hooks slow each module call nested in an outermost one; the plan takes what the end events say
// they added out of the eager time: 30 nested calls at 1 us each leave 20 of a call's 50 us.
TEST(CapturePlanTest, EagerTimesLeaveOutWhatTheProbesHooksAdded) {
  const std::vector<int> batches = {4, 4, 4, 8, 8, 8};
  const CapturePlan bare = Plan(ServingTrace(batches));
  const CapturePlan hooked = Plan(ServingTrace(batches, 6, 0.1, 30, 1'000));
  ASSERT_FALSE(bare.regions.empty());
  ASSERT_FALSE(hooked.regions.empty());
  ASSERT_EQ(bare.regions[0].sizes.size(), 2u);
  ASSERT_EQ(hooked.regions[0].sizes.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_NEAR(bare.regions[0].sizes[i].eager_us, 50, 0.01);
    EXPECT_NEAR(hooked.regions[0].sizes[i].eager_us, 20, 0.01);
  }
}

// The first capture on a stream allocates a cuBLAS workspace in its pool for each thread that launches cuBLAS kernels:
// calls that launch gemm kernels from one thread add one (32 MiB on compute capability 9.0) to the shared pool and to
// the private pools, on top of the 2 MiB segment each call's own 1 MiB needs; calls without them add none.
TEST(CapturePlanTest, PoolsHoldTheCublasWorkspaceOfEachLaunchingThread) {
  constexpr uint64_t kMiB = 1 << 20;
  trace::Trace trace = ServingTrace({4, 4, 4, 8, 8, 8});
  uint64_t address = 0x10000;
  for (const trace::ProbeEvent& event : trace.probe_events) {
    if (event.kind != trace::ProbeEventKind::kModuleCallBegin) continue;
    trace.allocations.push_back({trace::AllocatorEvent::Action::kAlloc, 0, event.time_ns + 2'000, address, kMiB / 2});
    trace.allocations.push_back({trace::AllocatorEvent::Action::kFree, 0, event.time_ns + 40'000, address, kMiB / 2});
    address += kMiB;
  }
  trace::DeviceInfo device;
  device.gpu.cc_major = 9;
  trace.devices.push_back(device);
  const CapturePlan plan = Plan(trace);
  ASSERT_EQ(plan.regions.size(), 1u);
  const BucketSet& set = plan.regions[0].sets.back();
  ASSERT_EQ(set.buckets.size(), 2u);
  EXPECT_EQ(set.private_pools_bytes, 2 * 2 * kMiB + 32 * kMiB);
  EXPECT_EQ(set.shared_pool_bytes, 2 * kMiB + 32 * kMiB);

  for (trace::KernelShape& shape : trace.kernel_shapes) shape.name = trace.Intern("elementwise");
  const CapturePlan without = Plan(trace);
  ASSERT_EQ(without.regions.size(), 1u);
  EXPECT_EQ(without.regions[0].sets.back().private_pools_bytes, 2 * 2 * kMiB);
  EXPECT_EQ(without.regions[0].sets.back().shared_pool_bytes, 2 * kMiB);
}

TEST(CapturePlanTest, BucketsTheDimensionWithTheMostSizesAndPadsTheRest) {
  const trace::Trace trace = ServingTrace(QueueBatches());
  const CapturePlan plan = Plan(trace);
  ASSERT_EQ(plan.regions.size(), 1u);
  const RegionPlan& region = plan.regions[0];
  EXPECT_EQ(region.region, "Net at serve.py:10 in serve");
  EXPECT_EQ(region.calls, QueueBatches().size());
  EXPECT_EQ(region.dimension, "0 dim 0");
  // The mask's first dimension is the batch too: it follows the buckets. Its second varies on its own.
  EXPECT_THAT(region.padded_to_max, ::testing::ElementsAre("mask dim 1 (to 17)"));
  ASSERT_EQ(region.sizes.size(), 65u);
  EXPECT_EQ(region.sizes.front().calls, 12u);  // size 1: 3 a round, 4 rounds
  EXPECT_TRUE(region.sizes.front().measured);
  EXPECT_NEAR(region.sizes.front().nodes, 6, 1e-9);
}

TEST(CapturePlanTest, MoreBucketsPadLessAndCostMoreAtStartUp) {
  const CapturePlan plan = Plan(ServingTrace(QueueBatches()));
  ASSERT_EQ(plan.regions.size(), 1u);
  const std::vector<BucketSet>& sets = plan.regions[0].sets;
  ASSERT_EQ(sets.size(), 3u);
  EXPECT_EQ(sets[0].name, "few");
  EXPECT_EQ(sets[1].name, "balanced");
  EXPECT_EQ(sets[2].name, "many");
  EXPECT_EQ(sets[0].buckets.size(), 2u);
  EXPECT_EQ(sets[2].buckets.size(), 16u);
  // The largest bucket is the largest size within the 99th percentile of the calls: the call of 500 runs eagerly.
  EXPECT_EQ(sets[0].buckets.back(), 64);
  EXPECT_LT(sets[0].calls_covered, 1.0);
  EXPECT_GT(sets[0].calls_covered, 0.99);
  EXPECT_GT(sets[0].padding_share, sets[1].padding_share);
  EXPECT_GE(sets[1].padding_share, sets[2].padding_share);
  EXPECT_LE(sets[1].padding_share, 0.05);
  EXPECT_LT(sets[0].capture_us, sets[2].capture_us);
  // Launch-bound calls (6 launches of 8 us, kernels of 2-8 us): every set saves, and the plan says to capture.
  for (const BucketSet& set : sets) EXPECT_GT(set.saving_per_call_us, 5) << set.name;
  EXPECT_TRUE(plan.regions[0].pays_off);
  EXPECT_THAT(plan.regions[0].verdict, HasSubstr("graphs, for 0 dim 0"));
}

TEST(CapturePlanTest, TheDynamicProgrammeFindsTheLeastPadding) {
  // Sizes 1, 2, 3 called often and 60 once: with two buckets the best split is {3, 60}, not {2, 60} or {1, 60}.
  std::vector<int> batches;
  for (int i = 0; i < 30; ++i) batches.insert(batches.end(), {1, 2, 3});
  for (int i = 0; i < 5; ++i) batches.push_back(60);
  PlanModel model;
  model.covered_quantile = 1.0;
  const trace::Trace trace = ServingTrace(batches);
  absl::StatusOr<CapturePlan> plan = PlanCaptures({&trace}, model);
  ASSERT_TRUE(plan.ok());
  EXPECT_THAT(plan->regions[0].sets[0].buckets, ::testing::ElementsAre(3, 60));
}

TEST(CapturePlanTest, GpuBoundCallsDoNotPayOff) {
  // One long kernel per call: nothing to save on launches, and padding only costs.
  const CapturePlan plan = Plan(ServingTrace(QueueBatches(), /*kernels=*/1, /*us_per_row=*/20));
  ASSERT_EQ(plan.regions.size(), 1u);
  EXPECT_FALSE(plan.regions[0].pays_off);
  EXPECT_THAT(plan.regions[0].verdict, HasSubstr("GPU-bound"));
}

TEST(CapturePlanTest, ShapesThatNeverRepeatAreSaidSo) {
  const CapturePlan plan = Plan(ServingTrace({5, 9, 14, 22, 31}));
  ASSERT_EQ(plan.regions.size(), 1u);
  EXPECT_FALSE(plan.regions[0].pays_off) << plan.regions[0].verdict;
  EXPECT_THAT(plan.regions[0].verdict, HasSubstr("no shape repeats (5 calls, 5 shapes)"));
}

TEST(CapturePlanTest, ATraceWithoutModuleCallsSaysHowToRecordOne) {
  testing_trace::TraceBuilder b;
  b.LaunchAndRun(1'000, 1, 7, "gemm", 1'000, 5'000);
  const trace::Trace trace = b.Build();
  absl::StatusOr<CapturePlan> plan = PlanCaptures({&trace}, PlanModel());
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(plan.status().message()), HasSubstr("graphcheck run --plan"));
}

}  // namespace
}  // namespace graphcheck::analysis
