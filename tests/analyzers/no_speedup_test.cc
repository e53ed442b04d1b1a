#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "analyzers/checks.h"
#include "tests/analyzers/launch_test_util.h"

namespace graphcheck::testing_trace {
namespace {

using ::testing::HasSubstr;
using ::testing::SizeIs;

TEST(NoSpeedupTest, FlagsGraphedStepsAsSlowAsEager) {
  const std::vector<Finding> findings = RunCheck(analyzers::NewNoSpeedupCheck(), LaunchBoundTrace(1000, 6, 100000));
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].message, HasSubstr("speedup x1.00"));
}

TEST(NoSpeedupTest, FasterGraphedStepsAreClean) {
  EXPECT_THAT(RunCheck(analyzers::NewNoSpeedupCheck(), LaunchBoundTrace(1000, 6, 30000)), SizeIs(0));
}

TEST(NoSpeedupTest, NeedsBothEagerAndGraphedSteps) {
  EXPECT_THAT(RunCheck(analyzers::NewNoSpeedupCheck(), LaunchBoundTrace(1000)), SizeIs(0));
}

}  // namespace
}  // namespace graphcheck::testing_trace
