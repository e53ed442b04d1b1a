#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "checks/checks.h"
#include "tests/checks/trace/trace_builder.h"

namespace graphcheck::testing_trace {
namespace {

using ::testing::HasSubstr;
using ::testing::SizeIs;

// Six eager steps, the fourth with an extra kernel when `branch`; then `graphed` steps that replay a graph.
trace::Trace Steps(bool branch, int graphed = 0) {
  TraceBuilder b;
  for (int s = 0; s < 6; ++s) {
    std::vector<StepKernel> kernels = {{"embed"}, {"gemm"}, {"softmax"}};
    if (branch && s == 3) kernels.insert(kernels.begin() + 2, StepKernel{"overflow_fixup"});
    EagerSteps(&b, 1000000 + s * 100000, 1, 100000, kernels);
  }
  for (int s = 0; s < graphed; ++s) b.Replay(2000000 + s * 100000, 1, 7, 1, 2000, 5000);
  return b.Build();
}

TEST(DynamicControlFlowTest, PointsAtTheFirstDivergingLaunch) {
  const trace::Trace trace = Steps(true);
  const std::vector<Finding> findings = RunCheck(checks::NewDynamicControlFlowCheck(), trace);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].message, HasSubstr("launches overflow_fixup where step"));
  EXPECT_THAT(findings[0].message, HasSubstr("launched softmax"));
  EXPECT_THAT(findings[0].evidence[0], HasSubstr("1 of 4 steps"));
  EXPECT_THAT(RunCheck(checks::NewDynamicShapeCheck(), trace), SizeIs(0));
}

// An eager reference run (or evaluation loop) beside the graphed loop is another phase: a note.
TEST(DynamicControlFlowTest, EagerStepsBesideGraphedOnesAreANote) {
  const std::vector<Finding> findings = RunCheck(checks::NewDynamicControlFlowCheck(), Steps(true, 8));
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].severity, Severity::kNote);
  EXPECT_THAT(findings[0].evidence.back(), HasSubstr("also replays graphs in"));
  EXPECT_EQ(RunCheck(checks::NewDynamicControlFlowCheck(), Steps(true))[0].severity, Severity::kWarning);
}

// One-time work: the first step that steps Adam also initialises its state (an extra fill kernel, seen on an H100);
// the first step after a capture runs what the capture's warmup left. Neither is a branch on data.
TEST(DynamicControlFlowTest, OneTimeWorkInTheFirstStepsIsNotControlFlow) {
  TraceBuilder b;
  for (int s = 0; s < 8; ++s) {
    std::vector<StepKernel> kernels = {{"embed"}, {"gemm"}, {"adam"}};
    if (s == 1) kernels.insert(kernels.begin() + 2, StepKernel{"FillFunctor<long>"});
    EagerSteps(&b, 1000000 + s * 100000, 1, 100000, kernels);
  }
  EXPECT_THAT(RunCheck(checks::NewDynamicControlFlowCheck(), b.Build()), SizeIs(0));

  TraceBuilder captured;
  for (int s = 0; s < 8; ++s) {
    std::vector<StepKernel> kernels = {{"embed"}, {"gemm"}, {"adam"}};
    if (s == 5) kernels.push_back(StepKernel{"free_workspace"});
    EagerSteps(&captured, 1000000 + s * 100000, 1, 100000, kernels);
    if (s == 4) {  // a capture between steps 4 and 5
      captured.Begin(1000000 + s * 100000 + 90000, 1, 9);
      captured.End(1000000 + s * 100000 + 95000, 1, 9, 3, 0, 1);
    }
  }
  EXPECT_THAT(RunCheck(checks::NewDynamicControlFlowCheck(), captured.Build()), SizeIs(0));
}

TEST(DynamicControlFlowTest, StepsCutBySamplingWindowsAreNotCompared) {
  // Launches were sampled in one window that ends in the middle of step 3: step 3 looks shorter, but only because the
  // recorder stopped.
  TraceBuilder b;
  b.trace().recorder.launches = trace::LaunchRecording::kSampled;
  b.trace().launch_windows = {{0, 3050000}};
  for (int s = 0; s < 5; ++s) {
    const uint64_t t = 1000000 * s;
    b.Push(t, 1, "step");
    if (t < 3000000) {
      EagerSteps(&b, t + 10000, 1, 100000, {{"embed"}, {"gemm"}, {"softmax"}});
    } else if (t < 4000000) {
      EagerSteps(&b, t + 10000, 1, 100000, {{"embed"}});  // the rest fell after the window
    }
    b.Pop(t + 900000, 1);
  }
  EXPECT_THAT(RunCheck(checks::NewDynamicControlFlowCheck(), b.Build()), SizeIs(0));
}

TEST(DynamicControlFlowTest, WarmupCutIntoLayersByRepetitionIsNotALoop) {
  // Three warm-up forwards of a two-layer model, no NVTX: the gemm repeats 6 times, so repetition cuts "steps" at each
  // layer, and they alternate between two sequences. Seen on an H200 in a clean capture program.
  TraceBuilder b;
  EagerSteps(&b, 1000000, 3, 100000, {{"gemm"}, {"bias_relu"}, {"gemm"}, {"bias"}});
  EXPECT_THAT(RunCheck(checks::NewDynamicControlFlowCheck(), b.Build()), SizeIs(0));
}

TEST(DynamicControlFlowTest, SameSequenceEveryStepIsClean) {
  EXPECT_THAT(RunCheck(checks::NewDynamicControlFlowCheck(), Steps(false)), SizeIs(0));
}

}  // namespace
}  // namespace graphcheck::testing_trace
