#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "checks/checks.h"
#include "tests/checks/trace/capture_test_util.h"

namespace graphcheck::testing_trace {
namespace {

using ::testing::HasSubstr;
using ::testing::SizeIs;

TEST(LegacyStreamInCaptureTest, FlagsLegacyStreamWorkRefusedWith906) {
  // AccumulateGrad's copy on the default stream during capture.
  const trace::Trace trace = FailedCapture([](TraceBuilder& b) {
    ApiCall& copy = b.Call(3000, 1, "cudaMemcpyAsync", ApiKind::kMemcpyAsync, 0);
    copy.legacy_stream = true;
    copy.return_code = 906;
  });
  const std::vector<Finding> findings = RunCheck(checks::NewLegacyStreamInCaptureCheck(), trace);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].severity, Severity::kError);
  EXPECT_THAT(findings[0].message, HasSubstr("refused"));
  EXPECT_THAT(findings[0].evidence[0], HasSubstr("906 cudaErrorStreamCaptureImplicit"));
  EXPECT_THAT(RunCheck(checks::NewCaptureErrorCheck(), trace), SizeIs(0));
}

// Seen on an H200 (torch 2.11): eager steps, then make_graphed_callables while the last step's loss was alive. The
// autograd engine's thread waited on the default stream for the parameters' AccumulateGrad nodes; the finding says
// that a graph from before the capture is alive and how to drop it.
TEST(LegacyStreamInCaptureTest, NamesAnAutogradGraphKeptFromTheEagerSteps) {
  const trace::Trace trace = FailedCapture([](TraceBuilder& b) {
    ApiCall& wait = b.Call(3000, 2, "cudaStreamWaitEvent", ApiKind::kStreamWaitEvent, 0);
    wait.legacy_stream = true;
    wait.return_code = 906;
    wait.backtrace =
        b.Backtrace({"cudaStreamWaitEvent", "c10::cuda::impl::CUDAGuardImpl::block()",
                     "torch::autograd::Engine::evaluate_function()", "torch::autograd::Engine::thread_main()"});
  });
  const std::vector<Finding> findings = RunCheck(checks::NewLegacyStreamInCaptureCheck(), trace);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].message, HasSubstr("autograd graph from before the capture is still alive"));
  EXPECT_THAT(findings[0].fix, HasSubstr("del loss"));
}

TEST(LegacyStreamInCaptureTest, WarnsAboutLegacyWorkThatEscapesTheGraph) {
  const trace::Trace trace =
      FailedCapture([](TraceBuilder& b) { b.Launch(3000, 1, 0, "add_kernel").legacy_stream = true; }, 0);
  const std::vector<Finding> findings = RunCheck(checks::NewLegacyStreamInCaptureCheck(), trace);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].severity, Severity::kWarning);
  EXPECT_THAT(findings[0].message, HasSubstr("not part of the graph"));
}

TEST(LegacyStreamInCaptureTest, FlagsCaptureBegunOnTheLegacyStream) {
  TraceBuilder b;
  ApiCall& begin = b.Begin(1000, 1, 0);
  begin.legacy_stream = true;
  begin.return_code = 900;
  const std::vector<Finding> findings = RunCheck(checks::NewLegacyStreamInCaptureCheck(), b.Build());
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].message, HasSubstr("legacy default stream"));
}

TEST(LegacyStreamInCaptureTest, CapturedStreamWorkIsClean) {
  EXPECT_THAT(RunCheck(checks::NewLegacyStreamInCaptureCheck(), FailedCapture([](TraceBuilder&) {}, 0)), SizeIs(0));
}

}  // namespace
}  // namespace graphcheck::testing_trace
