#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "checks/checks.h"
#include "tests/checks/trace/trace_builder.h"

namespace graphcheck::testing_trace {
namespace {

using ::testing::HasSubstr;
using ::testing::SizeIs;

// What comes before the steps.
enum class Before {
  kNothing,
  kFailedCapture,  // a capture that failed at the steps' Tensor.item()
};

using Frames = std::vector<std::tuple<std::string, uint32_t, std::string>>;

// Four NVTX "step" ranges of 100 us; with `sync_inside`, each calls Tensor.item() inside, else between steps, with
// `python` as its Python stack when given (and the failed capture's, unless `captured` is). Then `graphed` steps that
// replay a graph.
trace::Trace Steps(bool sync_inside, int graphed = 0, Before before = Before::kNothing, const Frames& python = {},
                   const Frames& captured = {}) {
  TraceBuilder b;
  const trace::BacktraceId bt = b.Backtrace(ItemFrames());
  const trace::PythonStackId stack = python.empty() ? 0 : b.PythonStack(python);
  if (before == Before::kFailedCapture) {
    b.Begin(1000, 1, 7, CaptureMode::kGlobal);
    ApiCall& item = TraceBuilder::In(b.Call(3000, 1, "cudaStreamSynchronize", ApiKind::kStreamSynchronize, 7), 11);
    item.backtrace = bt;
    item.python_stack = captured.empty() ? stack : b.PythonStack(captured);
    item.return_code = 900;
    b.End(5000, 1, 7, 11, 901, 0);
  }
  for (int s = 0; s < 4; ++s) {
    const uint64_t t = 1000000 + s * 100000;
    b.Push(t, 1, "step");
    b.LaunchAndRun(t + 1000, 1, 7, "gemm", 5000, 2000);
    ApiCall& sync =
        b.Call(sync_inside ? t + 3000 : t + 99500, 1, "cudaStreamSynchronize", ApiKind::kStreamSynchronize, 7);
    sync.backtrace = bt;
    sync.python_stack = stack;
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

// The capture was tried: where it failed at the same synchronization, sync-in-capture names it, and
// make_graphed_callables' warmup is the capture's to judge. A failed capture of other code leaves the forecast.
TEST(SyncInRegionTest, WhatACaptureTriedIsNotForecast) {
  EXPECT_THAT(RunCheck(checks::NewSyncInRegionCheck(), Steps(true, 0, Before::kFailedCapture), Region()), SizeIs(0));
  const Frames line_9 = {{"/home/me/train.py", 9, "forward"}, {"/home/me/train.py", 30, "main"}};
  const Frames line_12 = {{"/home/me/train.py", 12, "forward"}, {"/home/me/train.py", 30, "main"}};
  EXPECT_THAT(RunCheck(checks::NewSyncInRegionCheck(), Steps(true, 0, Before::kFailedCapture, line_9), Region()),
              SizeIs(0));
  // The program's steps hit another line's Tensor.item() than the one the capture failed at.
  EXPECT_THAT(
      RunCheck(checks::NewSyncInRegionCheck(), Steps(true, 0, Before::kFailedCapture, line_12, line_9), Region()),
      SizeIs(1));
  const Frames warmup = {{"/home/me/train.py", 9, "forward"},
                         {"/usr/lib/python3/dist-packages/torch/cuda/graphs.py", 380, "_make_graphed_callables"},
                         {"/usr/lib/python3/dist-packages/torch/cuda/graphs.py", 250, "make_graphed_callables"},
                         {"/home/me/train.py", 30, "main"}};
  EXPECT_THAT(RunCheck(checks::NewSyncInRegionCheck(), Steps(true, 0, Before::kNothing, warmup), Region()), SizeIs(0));
  EXPECT_THAT(RunCheck(checks::NewSyncInRegionCheck(), Steps(true, 0, Before::kNothing, line_9), Region()), SizeIs(1));
}

TEST(SyncInRegionTest, SyncBetweenStepsIsClean) {
  EXPECT_THAT(RunCheck(checks::NewSyncInRegionCheck(), Steps(false), Region()), SizeIs(0));
}

}  // namespace
}  // namespace graphcheck::testing_trace
