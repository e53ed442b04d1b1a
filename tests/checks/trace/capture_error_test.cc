#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "checks/checks.h"
#include "tests/checks/trace/capture_test_util.h"

namespace graphcheck::testing_trace {
namespace {

using ::testing::HasSubstr;
using ::testing::SizeIs;

TEST(CaptureErrorTest, ReportsAnUnexplainedErrorWithItsConsequences) {
  const trace::Trace trace = FailedCapture([](TraceBuilder& b) {
    ApiCall& wait =
        TraceBuilder::In(b.Call(3000, 1, "cudaStreamWaitEvent", ApiKind::kStreamWaitEvent, kStream), kCaptureId);
    wait.return_code = 905;
  });
  const std::vector<Finding> findings = RunCheck(checks::NewCaptureErrorCheck(), trace);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].severity, Severity::kError);
  EXPECT_EQ(findings[0].where.api, "cudaStreamWaitEvent");
  EXPECT_THAT(findings[0].message, HasSubstr("905 cudaErrorStreamCaptureIsolation"));
  EXPECT_THAT(findings[0].consequences, ::testing::Contains(HasSubstr("cudaStreamEndCapture")));
  EXPECT_FALSE(findings[0].fix.empty());
}

TEST(CaptureErrorTest, AnEndThatFailsWithNothingBeforeItIsTheRootCause) {
  const trace::Trace trace = FailedCapture([](TraceBuilder&) {});
  const std::vector<Finding> findings = RunCheck(checks::NewCaptureErrorCheck(), trace);
  // The relu launch that returned 901 comes first and is the error nobody explains; the end is its consequence.
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].where.api, "cudaLaunchKernel");
  EXPECT_THAT(findings[0].message, HasSubstr("901 cudaErrorStreamCaptureInvalidated"));
  EXPECT_THAT(findings[0].consequences, ::testing::ElementsAre(HasSubstr("cudaStreamEndCapture")));
}

TEST(CaptureErrorTest, SuccessfulCaptureIsClean) {
  EXPECT_THAT(RunCheck(checks::NewCaptureErrorCheck(), FailedCapture([](TraceBuilder&) {}, 0)), SizeIs(0));
}

}  // namespace
}  // namespace graphcheck::testing_trace
