#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "checks/checks.h"
#include "tests/checks/trace/capture_test_util.h"

namespace graphcheck::testing_trace {
namespace {

using ::testing::HasSubstr;
using ::testing::SizeIs;

TEST(EmptyGraphTest, FlagsACaptureWhoseWorkWentToAnotherStream) {
  TraceBuilder b;
  b.Begin(1000, 1, kStream);
  b.Launch(2000, 1, 8, "gemm");  // stream 8 is not part of the capture: runs eagerly
  b.End(3000, 1, kStream, kCaptureId, 0, 0);
  const std::vector<Finding> findings = RunCheck(checks::NewEmptyGraphCheck(), b.Build());
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].where.api, "cudaStreamBeginCapture");
  EXPECT_THAT(findings[0].message, HasSubstr("empty graph"));
  EXPECT_THAT(findings[0].evidence,
              ::testing::Contains(HasSubstr("1 kernel launched by the capturing thread on stream 8 during")));
}

TEST(EmptyGraphTest, CountsTheKernelsAndStreamsThatRanEagerly) {
  TraceBuilder b;
  b.Begin(1000, 1, kStream);
  b.Launch(2000, 1, 8, "gemm");
  b.Launch(2100, 1, 9, "relu");
  b.End(3000, 1, kStream, kCaptureId, 0, 0);
  const std::vector<Finding> findings = RunCheck(checks::NewEmptyGraphCheck(), b.Build());
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].evidence,
              ::testing::Contains(HasSubstr("2 kernels launched by the capturing thread on streams 8, 9 during")));
}

TEST(EmptyGraphTest, CaptureWithWorkIsClean) {
  EXPECT_THAT(RunCheck(checks::NewEmptyGraphCheck(), FailedCapture([](TraceBuilder&) {}, 0)), SizeIs(0));
}

TEST(EmptyGraphTest, AFailedCaptureIsNotAnEmptyGraph) {
  EXPECT_THAT(RunCheck(checks::NewEmptyGraphCheck(), FailedCapture([](TraceBuilder&) {}, 901)), SizeIs(0));
}

}  // namespace
}  // namespace graphcheck::testing_trace
