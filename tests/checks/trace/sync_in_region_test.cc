#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "checks/checks.h"
#include "tests/checks/trace/trace_builder.h"

namespace graphcheck::testing_trace {
namespace {

using ::testing::HasSubstr;
using ::testing::SizeIs;

// Four NVTX "step" ranges of 100 us; with `sync_inside`, each calls Tensor.item() inside, else between steps. Then
// `graphed` steps that replay a graph.
trace::Trace Steps(bool sync_inside, int graphed = 0) {
  TraceBuilder b;
  const trace::BacktraceId bt = b.Backtrace(ItemFrames());
  for (int s = 0; s < 4; ++s) {
    const uint64_t t = 1000000 + s * 100000;
    b.Push(t, 1, "step");
    b.LaunchAndRun(t + 1000, 1, 7, "gemm", 5000, 2000);
    b.Call(sync_inside ? t + 3000 : t + 99500, 1, "cudaStreamSynchronize", ApiKind::kStreamSynchronize, 7).backtrace =
        bt;
    b.Pop(t + 90000, 1);
  }
  for (int s = 0; s < graphed; ++s) {
    const uint64_t t = 2000000 + s * 100000;
    b.Push(t, 1, "step");
    b.Replay(t + 1000, 1, 7, 1, 2000, 5000);
    b.Pop(t + 90000, 1);
  }
  return b.Build();
}

analysis::AnalysisSettings Region() {
  analysis::AnalysisSettings settings;
  settings.steps.region = "step";
  return settings;
}

TEST(SyncInRegionTest, FlagsTheSyncInsideTheRegionOnce) {
  const std::vector<Finding> findings = RunCheck(checks::NewSyncInRegionCheck(), Steps(true), Region());
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].where.api, "cudaStreamSynchronize");
  EXPECT_EQ(findings[0].where.torch_op, "aten::_local_scalar_dense");
  EXPECT_EQ(findings[0].where.nvtx_path, "step");
  EXPECT_THAT(findings[0].message, HasSubstr("in 3 of 3 steps"));  // the first step is warmup
}

TEST(SyncInRegionTest, UsesTheRepeatedNvtxRangeWithoutARegion) {
  const std::vector<Finding> findings = RunCheck(checks::NewSyncInRegionCheck(), Steps(true));
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].evidence[0], HasSubstr("NVTX range 'step' (repeated)"));
}

// An eager reference run before the graphed loop (a common way to check graphs): its synchronizations are another
// phase's, a note and not a warning a clean program's gate fails on.
TEST(SyncInRegionTest, EagerStepsBesideGraphedOnesAreANote) {
  const std::vector<Finding> findings = RunCheck(checks::NewSyncInRegionCheck(), Steps(true, 6), Region());
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].severity, Severity::kNote);
  EXPECT_THAT(findings[0].evidence.back(), HasSubstr("also replays graphs in 5 steps"));  // the first is warmup
  EXPECT_EQ(RunCheck(checks::NewSyncInRegionCheck(), Steps(true), Region())[0].severity, Severity::kWarning);
}

TEST(SyncInRegionTest, SyncBetweenStepsIsClean) {
  EXPECT_THAT(RunCheck(checks::NewSyncInRegionCheck(), Steps(false), Region()), SizeIs(0));
}

}  // namespace
}  // namespace graphcheck::testing_trace
