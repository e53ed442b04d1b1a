// Graph coverage (analysis/coverage.h) over hand-built traces: all-eager and fully graphed steps, a mixed step split
// by two origins, steps without kernel records left out and said so, and the eager remainders' reasons and call sites.
#include "analysis/coverage.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <optional>

#include "analysis/trace_analysis.h"
#include "tests/checks/trace/trace_builder.h"

namespace graphcheck::testing_trace {
namespace {

using ::testing::DoubleEq;
using ::testing::HasSubstr;
using trace::ProbeEventKind;
using trace::ProbeOrigin;

constexpr uint64_t kStream = 7;
constexpr uint64_t kStepNs = 100000;
constexpr uint64_t kFirstStep = 100000;

struct Result {
  std::optional<Coverage> coverage;
  std::map<std::string, double> metrics;
};

Result Analyze(const trace::Trace& trace) {
  const analysis::TraceAnalysis analysis(trace);
  Result result;
  result.coverage = analysis::ComputeCoverage(analysis, analysis::IterationOptions());
  if (result.coverage) {
    for (const Metric& m : analysis::CoverageMetrics(*result.coverage)) result.metrics[m.ScopedName()] = m.value;
  }
  return result;
}

// A capture on thread 1, stream 7, begun by `origin` (a probe event just before), that captures `kernels` and makes
// graph `graph` with one node per kernel.
void Capture(TraceBuilder& b, uint64_t t, uint64_t graph, ProbeOrigin origin, const std::vector<std::string>& kernels) {
  b.Probe(t, 1, ProbeEventKind::kCaptureBegin, /*graph=*/graph + 100, origin);
  b.Begin(t + 100, 1, kStream);
  for (size_t k = 0; k < kernels.size(); ++k) {
    TraceBuilder::In(b.Launch(t + 200 + k * 100, 1, kStream, kernels[k]), graph);
  }
  b.End(t + 900, 1, kStream, graph, 0, static_cast<uint32_t>(kernels.size())).graph_id = graph;
}

// `steps` NVTX ranges "step" from kFirstStep, each filled by `body(builder, step start)`.
template <typename Body>
void Steps(TraceBuilder& b, int steps, Body body) {
  for (int s = 0; s < steps; ++s) {
    const uint64_t t = kFirstStep + s * kStepNs;
    b.Push(t, 1, "step");
    body(b, t);
    b.Pop(t + kStepNs - 1000, 1);
  }
}

TEST(CoverageTest, AllEagerStepsAreNoneGraphedAndTheirKernelsNeverCaptured) {
  TraceBuilder b;
  const trace::PythonStackId site = b.PythonStack({{"/home/me/train.py", 12, "step"}});
  Steps(b, 4, [&](TraceBuilder& b, uint64_t t) {
    b.LaunchAndRun(t + 1000, 1, kStream, "gemm", 2000, 6000).python_stack = site;
    b.LaunchAndRun(t + 2000, 1, kStream, "relu", 2000, 2000);
  });
  const Result r = Analyze(b.Build());
  ASSERT_TRUE(r.coverage);
  EXPECT_EQ(r.coverage->steps_counted, 3u);  // the step range leaves the first out
  EXPECT_EQ(r.coverage->steps_without_records, 0u);
  EXPECT_THAT(r.metrics.at("coverage.graphed_kernel_share"), DoubleEq(0));
  EXPECT_THAT(r.metrics.at("coverage.graphed_gpu_time_share"), DoubleEq(0));
  EXPECT_THAT(r.metrics.at("coverage.eager_gpu_us"), DoubleEq(8));
  EXPECT_EQ(r.coverage->total.eager_kernels, 6u);
  ASSERT_EQ(r.coverage->remainders.size(), 2u);
  const EagerRemainder& gemm = r.coverage->remainders[0];  // the larger first
  EXPECT_EQ(gemm.kernel, "gemm");
  EXPECT_THAT(gemm.gpu_us, DoubleEq(18));
  EXPECT_EQ(gemm.launches, 3u);
  EXPECT_EQ(gemm.steps, 3u);
  EXPECT_EQ(gemm.reason, "never-captured");
  ASSERT_FALSE(gemm.where.python.empty());  // at its Python call site
  EXPECT_EQ(gemm.where.python[0].file, "/home/me/train.py");
  EXPECT_EQ(gemm.where.python[0].line, 12);
  EXPECT_EQ(gemm.where.nvtx_path, "step");
}

// Eager warmup steps, then graphed steps, then one step that fell back to eager: the figures start at the first
// graphed step (the warmup is said to be left out), and the fallback counts against coverage.
TEST(CoverageTest, EagerStepsBeforeTheGraphsAreLeftOutAndAFallbackCounts) {
  TraceBuilder b;
  Capture(b, 1000, 11, ProbeOrigin::kUser, {"gemm"});
  Steps(b, 9, [](TraceBuilder& b, uint64_t t) {
    const int step = static_cast<int>((t - kFirstStep) / kStepNs);
    if (step >= 4 && step < 8) {
      b.Replay(t + 1000, 1, kStream, 11, 2000, 8000);
    } else {
      b.LaunchAndRun(t + 1000, 1, kStream, "gemm", 2000, 8000);
    }
  });
  const Result r = Analyze(b.Build());
  ASSERT_TRUE(r.coverage);
  EXPECT_THAT(r.coverage->scope, HasSubstr("left out: the program ran them before it replayed graphs"));
  for (const StepCoverage& step : r.coverage->steps) {
    EXPECT_NE(step.label, "eager step 1") << "a warmup step counted";
  }
  ASSERT_FALSE(r.coverage->steps.empty());
  EXPECT_EQ(r.coverage->steps.back().eager_kernels, 1u) << r.coverage->steps.back().label;  // the fallback
  const double share = r.metrics.at("coverage.graphed_gpu_time_share");
  EXPECT_GT(share, 0.5);
  EXPECT_LT(share, 1.0);
}

TEST(CoverageTest, FullyGraphedStepsAreAllReplays) {
  TraceBuilder b;
  Capture(b, 1000, 11, ProbeOrigin::kUser, {"gemm", "relu"});
  Steps(b, 4, [](TraceBuilder& b, uint64_t t) { b.Replay(t + 1000, 1, kStream, 11, 2000, 8000); });
  const Result r = Analyze(b.Build());
  ASSERT_TRUE(r.coverage);
  EXPECT_EQ(r.coverage->steps_counted, 3u);
  EXPECT_THAT(r.metrics.at("coverage.graphed_kernel_share"), DoubleEq(1));
  EXPECT_THAT(r.metrics.at("coverage.graphed_gpu_time_share"), DoubleEq(1));
  EXPECT_THAT(r.metrics.at("coverage.graphed_gpu_time_share.user"), DoubleEq(1));
  EXPECT_THAT(r.metrics.at("coverage.eager_gpu_us"), DoubleEq(0));
  ASSERT_EQ(r.coverage->steps.size(), 3u);
  EXPECT_EQ(r.coverage->steps[0].label, "graphed step 1");
  ASSERT_EQ(r.coverage->steps[0].graphed.size(), 1u);
  EXPECT_EQ(r.coverage->steps[0].graphed[0].origin, "user");
  EXPECT_EQ(r.coverage->steps[0].graphed[0].kernels, 2u);  // the graph's nodes
  EXPECT_THAT(r.coverage->steps[0].graphed[0].gpu_us, DoubleEq(8));
  EXPECT_TRUE(r.coverage->remainders.empty());
}

TEST(CoverageTest, MixedStepsAreSplitByWhoMadeTheGraphs) {
  TraceBuilder b;
  Capture(b, 1000, 11, ProbeOrigin::kGraphedCallables, {"fwd1", "fwd2", "bwd"});
  Capture(b, 3000, 12, ProbeOrigin::kUser, {"adam"});
  Steps(b, 4, [](TraceBuilder& b, uint64_t t) {
    b.Replay(t + 1000, 1, kStream, 11, 2000, 30000);
    b.Replay(t + 2000, 1, kStream, 12, 40000, 10000);
    b.LaunchAndRun(t + 3000, 1, kStream, "loss", 60000, 10000);
  });
  const Result r = Analyze(b.Build());
  ASSERT_TRUE(r.coverage);
  EXPECT_THAT(r.metrics.at("coverage.graphed_kernel_share"), DoubleEq(0.8));
  EXPECT_THAT(r.metrics.at("coverage.graphed_gpu_time_share"), DoubleEq(0.8));
  EXPECT_THAT(r.metrics.at("coverage.graphed_gpu_time_share.make_graphed_callables"), DoubleEq(0.6));
  EXPECT_THAT(r.metrics.at("coverage.graphed_kernel_share.make_graphed_callables"), DoubleEq(0.6));
  EXPECT_THAT(r.metrics.at("coverage.graphed_gpu_time_share.user"), DoubleEq(0.2));
  EXPECT_THAT(r.metrics.at("coverage.graphed_kernel_share.user"), DoubleEq(0.2));
  const StepCoverage& total = r.coverage->total;
  ASSERT_EQ(total.graphed.size(), 2u);
  EXPECT_EQ(total.graphed[0].origin, "make_graphed_callables");  // most GPU time first
  EXPECT_EQ(total.graphed[1].origin, "user");
  ASSERT_EQ(r.coverage->remainders.size(), 1u);
  EXPECT_EQ(r.coverage->remainders[0].kernel, "loss");
  EXPECT_EQ(r.coverage->remainders[0].reason, "never-captured");
}

TEST(CoverageTest, StepsWithoutKernelRecordsAreLeftOutAndSaidSo) {
  TraceBuilder b;
  b.trace().recorder.launches = trace::LaunchRecording::kSampled;
  b.trace().launch_windows = {{0, kFirstStep + 3 * kStepNs}};  // steps 0-2 recorded
  Capture(b, 1000, 11, ProbeOrigin::kUser, {"gemm"});
  Steps(b, 6, [](TraceBuilder& b, uint64_t t) {
    if (t < kFirstStep + 3 * kStepNs) {
      b.Replay(t + 1000, 1, kStream, 11, 2000, 8000);
    } else {  // outside the window: the launch is recorded, its GPU time is not
      b.Call(t + 1000, 1, "cudaGraphLaunch", ApiKind::kGraphLaunch, kStream).graph_id = 11;
    }
  });
  const Result r = Analyze(b.Build());
  ASSERT_TRUE(r.coverage);
  EXPECT_EQ(r.coverage->steps_counted, 2u);
  EXPECT_EQ(r.coverage->steps_without_records, 3u);
  EXPECT_THAT(r.coverage->scope, HasSubstr("2 steps with kernel records (graphed steps 1-2"));
  EXPECT_THAT(r.coverage->scope, HasSubstr("3 steps without kernel records left out (graphed steps 3-5)"));
  EXPECT_THAT(r.metrics.at("coverage.steps"), DoubleEq(2));
  EXPECT_THAT(r.metrics.at("coverage.steps_without_records"), DoubleEq(3));
  EXPECT_THAT(r.metrics.at("coverage.graphed_gpu_time_share"), DoubleEq(1));
}

TEST(CoverageTest, NoStepWithRecordsGivesNoShares) {
  TraceBuilder b;
  b.trace().recorder.launches = trace::LaunchRecording::kCaptureOnly;
  Capture(b, 1000, 11, ProbeOrigin::kUser, {"gemm"});
  Steps(b, 4, [](TraceBuilder& b, uint64_t t) {
    b.Call(t + 1000, 1, "cudaGraphLaunch", ApiKind::kGraphLaunch, kStream).graph_id = 11;
  });
  const Result r = Analyze(b.Build());
  ASSERT_TRUE(r.coverage);
  EXPECT_EQ(r.coverage->steps_counted, 0u);
  EXPECT_EQ(r.coverage->steps_without_records, 3u);
  EXPECT_THAT(r.coverage->scope, HasSubstr("no step has kernel records"));
  EXPECT_EQ(r.metrics.count("coverage.graphed_gpu_time_share"), 0u);  // never invented
  EXPECT_EQ(r.metrics.count("coverage.eager_gpu_us"), 0u);
}

TEST(CoverageTest, AKernelOfAFailedCaptureNamesItsRootCauseAndTheOtherWasNeverCaptured) {
  TraceBuilder b;
  b.Probe(900, 1, ProbeEventKind::kCaptureBegin, 77, ProbeOrigin::kUser);
  b.Begin(1000, 1, kStream).python_stack = b.PythonStack({{"/home/me/train.py", 30, "capture"}});
  TraceBuilder::In(b.Launch(2000, 1, kStream, "attention"), 5);
  ApiCall& sync = TraceBuilder::In(b.Call(3000, 1, "cudaStreamSynchronize", ApiKind::kStreamSynchronize, kStream), 5);
  sync.return_code = 900;
  sync.python_stack = b.PythonStack({{"/home/me/model.py", 18, "forward"}, {"/home/me/train.py", 31, "capture"}});
  b.End(4000, 1, kStream, 5, 901, 0);
  const trace::PythonStackId optimizer = b.PythonStack({{"/home/me/train.py", 40, "step"}});
  Steps(b, 4, [&](TraceBuilder& b, uint64_t t) {
    b.LaunchAndRun(t + 1000, 1, kStream, "attention", 2000, 9000);
    b.LaunchAndRun(t + 2000, 1, kStream, "adam", 12000, 3000).python_stack = optimizer;
  });
  const Result r = Analyze(b.Build());
  ASSERT_TRUE(r.coverage);
  ASSERT_EQ(r.coverage->remainders.size(), 2u);
  const EagerRemainder& attention = r.coverage->remainders[0];
  EXPECT_EQ(attention.kernel, "attention");
  EXPECT_EQ(attention.reason, "failed-capture");
  EXPECT_THAT(attention.detail, HasSubstr("begun by the program at /home/me/train.py:30 in capture"));
  EXPECT_THAT(attention.detail, HasSubstr("sync-in-capture, cudaStreamSynchronize at /home/me/model.py:18 in forward"));
  ASSERT_FALSE(attention.reason_where.python.empty());
  EXPECT_EQ(attention.reason_where.python[0].line, 18);
  const EagerRemainder& adam = r.coverage->remainders[1];
  EXPECT_EQ(adam.reason, "never-captured");
  ASSERT_FALSE(adam.where.python.empty());
  EXPECT_EQ(adam.where.python[0].line, 40);
}

TEST(CoverageTest, ASynchronizingStepAndAVaryingShapeAreReasons) {
  TraceBuilder b;
  const trace::PythonStackId item = b.PythonStack({{"/home/me/train.py", 50, "step"}});
  Steps(b, 4, [&](TraceBuilder& b, uint64_t t) {
    const uint32_t rows = static_cast<uint32_t>(1 + (t / kStepNs) % 3);
    b.LaunchAndRun(t + 1000, 1, kStream, "gather", 2000, 1000, {rows, 1, 1});
    b.LaunchAndRun(t + 2000, 1, kStream, "loss", 2000, 1000);
    b.Call(t + 3000, 1, "cudaStreamSynchronize", ApiKind::kStreamSynchronize, kStream).python_stack = item;
  });
  const Result r = Analyze(b.Build());
  ASSERT_TRUE(r.coverage);
  std::map<std::string, const EagerRemainder*> by_kernel;
  for (const EagerRemainder& rem : r.coverage->remainders) by_kernel[rem.kernel] = &rem;
  ASSERT_EQ(by_kernel.size(), 2u);
  EXPECT_EQ(by_kernel.at("gather")->reason, "dynamic-shape");
  EXPECT_EQ(by_kernel.at("loss")->reason, "sync-in-region");
  EXPECT_THAT(by_kernel.at("loss")->detail, HasSubstr("cudaStreamSynchronize at /home/me/train.py:50 in step"));
}

}  // namespace
}  // namespace graphcheck::testing_trace
