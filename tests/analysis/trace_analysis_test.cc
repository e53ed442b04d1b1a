// The per-trace analysis every analyzer shares: where a call happened, call sites, kernels by correlation id.
#include "analysis/trace_analysis.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/checks/trace/trace_builder.h"

namespace graphcheck::testing_trace {
namespace {

TEST(TraceAnalysisTest, LocatesACallWithItsStreamNvtxPathAndOperator) {
  TraceBuilder b;
  b.Push(100, 1, "train_step");
  b.Push(150, 1, "forward");
  ApiCall& sync = b.Call(200, 1, "cudaStreamSynchronize", ApiKind::kStreamSynchronize, 7);
  sync.backtrace = b.Backtrace(ItemFrames());
  b.Pop(300, 1);
  b.Pop(400, 1);
  const trace::Trace trace = b.Build();
  const analysis::TraceAnalysis analysis(trace);
  const Location where = analysis.Locate(0);
  EXPECT_EQ(where.api, "cudaStreamSynchronize");
  EXPECT_EQ(where.thread_id, 1u);
  EXPECT_EQ(where.stream_id, 7u);
  EXPECT_EQ(where.nvtx_path, "train_step/forward");
  EXPECT_EQ(where.torch_op, "aten::_local_scalar_dense");
  EXPECT_FALSE(where.backtrace.empty());
  EXPECT_EQ(where.pid, 4242u);
}

TEST(TraceAnalysisTest, LocatesACallsPythonFramesAndMarksTheUsersOwn) {
  TraceBuilder b;
  ApiCall& sync = b.Call(200, 1, "cudaStreamSynchronize", ApiKind::kStreamSynchronize, 7);
  sync.backtrace = b.Backtrace(ItemFrames());
  sync.python_stack = b.PythonStack({{"/usr/lib/python3/dist-packages/torch/_tensor.py", 1020, "Tensor.item"},
                                     {"/home/me/train.py", 42, "train_step"},
                                     {"/usr/lib/python3.12/contextlib.py", 81, "inner"},
                                     {"/home/me/train.py", 60, "main"}});
  const trace::Trace trace = b.Build();
  const Location where = analysis::TraceAnalysis(trace).Locate(0);
  ASSERT_EQ(where.python.size(), 4u);
  EXPECT_EQ(where.python[1], (SourceFrame{"/home/me/train.py", 42, "train_step", true}));
  EXPECT_FALSE(where.python[0].user);
  EXPECT_FALSE(where.python[2].user);
  EXPECT_TRUE(where.python[3].user);
  EXPECT_FALSE(where.backtrace.empty());
}

TEST(TraceAnalysisTest, LocatesNoPythonFramesForACallWithoutAStack) {
  TraceBuilder b;
  b.Call(200, 1, "cudaStreamSynchronize", ApiKind::kStreamSynchronize, 7);
  const trace::Trace trace = b.Build();
  EXPECT_TRUE(analysis::TraceAnalysis(trace).Locate(0).python.empty());
}

// autograd runs a CUDA backward on its own threads, which run no Python: their calls are located at the program's
// backward() they ran under (the probe's backward-begin and backward-end on the calling thread).
TEST(TraceAnalysisTest, LocatesACallOnAutogradsThreadAtTheProgramsBackward) {
  TraceBuilder b;
  const trace::PythonStackId backward = b.PythonStack({{"/home/me/train.py", 51, "step"}});
  b.Probe(1'000, 1, trace::ProbeEventKind::kBackwardBegin).value = 1;
  b.trace().probe_events.back().stack = backward;
  b.Call(1'500, 7, "cudaStreamSynchronize", ApiKind::kStreamSynchronize, 7);  // autograd's thread, inside
  ApiCall& own = b.Call(1'600, 1, "cudaStreamSynchronize", ApiKind::kStreamSynchronize, 7);  // the caller's thread
  own.python_stack = b.PythonStack({{"/home/me/train.py", 77, "hook"}});
  b.Probe(2'000, 1, trace::ProbeEventKind::kBackwardEnd).value = 1;
  b.Call(2'500, 7, "cudaStreamSynchronize", ApiKind::kStreamSynchronize, 7);  // after it
  const trace::Trace trace = b.Build();
  const analysis::TraceAnalysis analysis(trace);
  ASSERT_EQ(analysis.Locate(0).python.size(), 1u);
  EXPECT_EQ(analysis.Locate(0).python[0], (SourceFrame{"/home/me/train.py", 51, "step", true}));
  ASSERT_EQ(analysis.Locate(1).python.size(), 1u);
  EXPECT_EQ(analysis.Locate(1).python[0].line, 77);  // a call with its own stack keeps it
  EXPECT_TRUE(analysis.Locate(2).python.empty());
}

TEST(TraceAnalysisTest, CallSitesGroupOneSiteAcrossSteps) {
  TraceBuilder b;
  const trace::BacktraceId here = b.Backtrace({"cudaStreamSynchronize", "train.py:step"});
  const trace::BacktraceId there = b.Backtrace({"cudaStreamSynchronize", "train.py:log"});
  for (int step = 0; step < 3; ++step) {
    b.Call(1000 * (step + 1), 1, "cudaStreamSynchronize", ApiKind::kStreamSynchronize).backtrace = here;
    b.Call(1000 * (step + 1) + 10, 1, "cudaStreamSynchronize", ApiKind::kStreamSynchronize).backtrace = here;
  }
  b.Call(9000, 1, "cudaStreamSynchronize", ApiKind::kStreamSynchronize).backtrace = there;
  const trace::Trace trace = b.Build();
  analysis::CallSites sites(trace);
  for (size_t i = 0; i < 6; ++i) sites.Add(i, i / 2);
  sites.Add(6, 3);
  ASSERT_EQ(sites.sites().size(), 2u);
  EXPECT_EQ(sites.sites()[0].first_call, 0u);
  EXPECT_EQ(sites.sites()[0].calls, 6u);
  EXPECT_EQ(sites.sites()[0].groups, 3u);
  EXPECT_EQ(sites.sites()[1].calls, 1u);
}

TEST(TraceAnalysisTest, StepCallSitesTakeTheWantedCallsInsideTheStepsOnly) {
  TraceBuilder b;
  b.Call(500, 1, "cudaStreamSynchronize", ApiKind::kStreamSynchronize, 7);  // before the steps
  for (int s = 0; s < 3; ++s) {
    b.Call(10000 * (s + 1), 1, "cudaStreamSynchronize", ApiKind::kStreamSynchronize, 7);
    b.Launch(10000 * (s + 1) + 100, 1, 7, "k");
  }
  TraceBuilder::In(b.Call(30500, 1, "cudaStreamSynchronize", ApiKind::kStreamSynchronize, 7), 3);  // in a capture
  const trace::Trace trace = b.Build();
  std::vector<analysis::Iteration> steps;
  for (int s = 0; s < 3; ++s) {
    analysis::Iteration step;
    step.start_ns = 10000 * (s + 1);
    step.end_ns = step.start_ns + 9000;
    step.first_call = 1 + 2 * s;
    step.end_call = s == 2 ? 8 : 3 + 2 * s;
    steps.push_back(step);
  }
  const analysis::CallSites sites = analysis::StepCallSites(
      trace, steps,
      [](const trace::Trace&, const trace::ApiCall& call) { return call.kind == ApiKind::kStreamSynchronize; });
  ASSERT_EQ(sites.sites().size(), 1u);
  EXPECT_EQ(sites.sites()[0].first_call, 1u);
  EXPECT_EQ(sites.sites()[0].calls, 3u);
  EXPECT_EQ(sites.sites()[0].groups, 3u);
}

TEST(TraceAnalysisTest, FindsKernelsByCorrelationId) {
  std::vector<trace::KernelActivity> kernels(3);
  kernels[0].correlation_id = 30;
  kernels[1].correlation_id = 10;
  kernels[2].correlation_id = 20;
  const analysis::CorrelationIndex index(kernels);
  EXPECT_EQ(index.Find(10), 1);
  EXPECT_EQ(index.Find(30), 0);
  EXPECT_EQ(index.Find(99), -1);
  // Inside the dense table's range but without a kernel (a launch whose kernel record CUPTI lost): -1, not 2^32 - 1.
  // Regression: the corrupted-trace sweep crashed analyze here.
  EXPECT_EQ(index.Find(15), -1);
}

TEST(TraceAnalysisTest, FindsKernelsByCorrelationIdInASparseTable) {
  std::vector<trace::KernelActivity> kernels(2);
  kernels[0].correlation_id = 7;
  kernels[1].correlation_id = 4'000'000'000u;  // too far apart for a dense table
  const analysis::CorrelationIndex index(kernels);
  EXPECT_EQ(index.Find(4'000'000'000u), 1);
  EXPECT_EQ(index.Find(8), -1);
}

}  // namespace
}  // namespace graphcheck::testing_trace
