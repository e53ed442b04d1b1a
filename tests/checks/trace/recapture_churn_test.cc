#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "checks/checks.h"
#include "tests/checks/trace/capture_test_util.h"

namespace graphcheck::testing_trace {
namespace {

using ::testing::HasSubstr;
using ::testing::SizeIs;

// `captures` captures from one call site; with `interleaved`, each is followed by a replay, else all replays come
// after the last capture (per-layer capture up front).
// `lines`, when given, is the Python line of each capture's begin (a Python program: the host backtrace is the same
// for every capture PyTorch begins).
trace::Trace Captures(int captures, bool interleaved, bool varying_grid, const std::vector<uint32_t>& lines = {}) {
  TraceBuilder b;
  const trace::BacktraceId bt = b.Backtrace({"cudaStreamBeginCapture", "torch::cuda::CUDAGraph::capture_begin"});
  uint64_t t = 1000;
  for (int c = 0; c < captures; ++c) {
    ApiCall& begin = b.Begin(t, 1, kStream);
    begin.backtrace = bt;
    if (!lines.empty()) {
      begin.python_stack = b.PythonStack({{"/usr/lib/python3/dist-packages/torch/cuda/graphs.py", 257, "__enter__"},
                                          {"/home/me/train.py", lines[c], "main"}});
    }
    TraceBuilder::In(b.Launch(t + 100, 1, kStream, "gemm", {varying_grid ? 8u * (c + 1) : 8u, 1, 1}), 100 + c);
    b.End(t + 200, 1, kStream, 100 + c, 0, 1).graph_id = 100 + c;
    if (interleaved) b.Replay(t + 300, 1, kStream, 100 + c, 1000, 1000);
    t += 10000;
  }
  for (int c = 0; !interleaved && c < captures; ++c) b.Replay(t + c * 1000, 1, kStream, 100 + c, 1000, 1000);
  return b.Build();
}

TEST(RecaptureChurnTest, FlagsTheSameRegionCapturedBetweenReplays) {
  const std::vector<Finding> findings = RunCheck(checks::NewRecaptureChurnCheck(), Captures(4, true, true));
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].message, HasSubstr("captured 4 times"));
  EXPECT_THAT(findings[0].evidence, ::testing::Contains(HasSubstr("dynamic shapes")));
}

TEST(RecaptureChurnTest, CapturesMadeUpFrontAreNotChurn) {
  EXPECT_THAT(RunCheck(checks::NewRecaptureChurnCheck(), Captures(4, false, false)), SizeIs(0));
}

// A Python program that captures an inference graph at one line and, after replaying it, graphs its training step at
// another: two regions, not one captured three times. The same line capturing each step is churn.
TEST(RecaptureChurnTest, PythonCapturesAreRegionsByTheirLine) {
  EXPECT_THAT(RunCheck(checks::NewRecaptureChurnCheck(), Captures(3, true, false, {40, 52, 52})), SizeIs(0));
  EXPECT_THAT(RunCheck(checks::NewRecaptureChurnCheck(), Captures(3, true, false, {52, 52, 52})), SizeIs(1));
}

// One graph per bucket, captured lazily at one line as each bucket first comes, every earlier bucket's graph replayed
// again after each new capture (a serving loop): a family of graphs, not churn. The same loop where each new capture
// leaves the last graph unused is.
TEST(RecaptureChurnTest, GraphsStillReplayedAfterTheNextCaptureAreNotChurn) {
  auto lazy_buckets = [](bool earlier_replayed_again) {
    TraceBuilder b;
    uint64_t t = 1000;
    for (uint32_t c = 0; c < 3; ++c) {
      ApiCall& begin = b.Begin(t, 1, kStream);
      begin.python_stack = b.PythonStack({{"/home/me/serve.py", 49, "capture"}});
      TraceBuilder::In(b.Launch(t + 100, 1, kStream, "gemm", {4u << c, 1, 1}), 100 + c);
      b.End(t + 200, 1, kStream, 100 + c, 0, 1).graph_id = 100 + c;
      for (uint32_t g = earlier_replayed_again ? 0 : c; g <= c; ++g)
        b.Replay(t + 300 + 100 * g, 1, kStream, 100 + g, 10, 10);
      t += 10000;
    }
    return b.Build();
  };
  EXPECT_THAT(RunCheck(checks::NewRecaptureChurnCheck(), lazy_buckets(true)), SizeIs(0));
  const std::vector<Finding> churn = RunCheck(checks::NewRecaptureChurnCheck(), lazy_buckets(false));
  ASSERT_THAT(churn, SizeIs(1));
  EXPECT_THAT(churn[0].evidence, ::testing::Contains(HasSubstr("2 of the 3 graphs never launched again")));
}

TEST(RecaptureChurnTest, RespectsMinCaptures) {
  CheckOptions options;
  options.Set("recapture-churn", "min-captures", "5");
  EXPECT_THAT(RunCheck(checks::NewRecaptureChurnCheck(), Captures(4, true, false), options), SizeIs(0));
}

}  // namespace
}  // namespace graphcheck::testing_trace
