// The wording shared by the capture checks: the capture a problem happened in, and the PyTorch operator clause.
#include "checks/trace/internal/capture_problem_check.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/checks/trace/capture_test_util.h"

namespace graphcheck::testing_trace {
namespace {

using ::testing::HasSubstr;

TEST(CaptureProblemCheckTest, DescribesTheCaptureByStreamThreadAndMode) {
  TraceBuilder b;
  b.Begin(1000, 3, kStream, CaptureMode::kThreadLocal);
  b.End(2000, 3, kStream, kCaptureId, 0, 1);
  const trace::Trace trace = b.Build();
  const analysis::CaptureAnalysis captures(trace);
  ASSERT_EQ(captures.windows().size(), 1u);
  const std::string text = analysis::DescribeCapture(trace, captures.windows()[0]);
  EXPECT_THAT(text, HasSubstr("stream 7"));
  EXPECT_THAT(text, HasSubstr("thread 3"));
  EXPECT_THAT(text, HasSubstr("thread-local"));
}

TEST(CaptureProblemCheckTest, OperatorClauseNamesWhatTheUserWrote) {
  Location where;
  EXPECT_EQ(analysis::OperatorClause(where), "");
  where.torch_op = "aten::_local_scalar_dense";
  EXPECT_THAT(analysis::OperatorClause(where), HasSubstr("Tensor.item()"));
}

}  // namespace
}  // namespace graphcheck::testing_trace
