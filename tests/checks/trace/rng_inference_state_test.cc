// rng-inference-state: the inference-tensor error that PyTorch's graph code raises at capture begin is this check; the
// same message raised by the program's own code inside a capture, or read from stderr, is not.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "checks/checks.h"
#include "checks/output/stderr_messages.h"
#include "tests/checks/trace/probe_test_util.h"

namespace graphcheck::testing_trace {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

constexpr char kInferenceUpdate[] =
    "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone to get a normal "
    "tensor before doing inplace update.";

// torch.cuda.graph's __enter__ called capture_begin (through the probe's wrapper), which raised before CUDA began.
trace::Trace RaisedAtCaptureBegin() {
  TraceBuilder b;
  b.Probe(900, 1, ProbeEventKind::kCaptureBegin, kGraph, ProbeOrigin::kUser);
  b.Exception(1000, 1, ProbeEventKind::kCaptureException, kGraph, "RuntimeError", kInferenceUpdate,
              b.PythonStack({{"/opt/graphcheck/probe/graphcheck_probe.py", 360, "capture_begin"},
                             {"/usr/lib/python3/dist-packages/torch/cuda/graphs.py", 257, "__enter__"},
                             {"/home/me/train.py", 41, "capture"}}));
  return b.Build();
}

TEST(RngInferenceStateTest, GraphCodeFailingOnInferenceStateIsFlaggedAtTheProgramsLine) {
  const std::vector<Finding> findings = RunCheck(checks::NewRngInferenceStateCheck(), RaisedAtCaptureBegin());
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].check_id, "rng-inference-state");
  EXPECT_EQ(findings[0].severity, Severity::kError);
  EXPECT_THAT(findings[0].message, HasSubstr("torch.inference_mode()"));
  EXPECT_THAT(findings[0].fix, HasSubstr("graphsafe_set_state"));
  const SourceFrame* at = FirstUserFrame(findings[0].where.python);
  ASSERT_NE(at, nullptr);
  EXPECT_EQ(at->file, "/home/me/train.py");
  EXPECT_EQ(at->line, 41u);
  EXPECT_THAT(RunCheck(checks::NewCaptureErrorCheck(), RaisedAtCaptureBegin()), IsEmpty());
}

TEST(RngInferenceStateTest, TheProgramsOwnInferenceTensorIsNotAGeneratorProblem) {
  const trace::Trace trace = CaughtExceptionInCapture(kInferenceUpdate);  // raised in the body, in torch/_tensor.py
  EXPECT_THAT(RunCheck(checks::NewRngInferenceStateCheck(), trace), IsEmpty());
  EXPECT_THAT(RunCheck(checks::NewCaptureErrorCheck(), trace), SizeIs(1));
  EXPECT_EQ(analysis::MatchKnownMessage(kInferenceUpdate), nullptr);  // a line of stderr says nothing of graphs
}

}  // namespace
}  // namespace graphcheck::testing_trace
