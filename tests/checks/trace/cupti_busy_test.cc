#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "checks/checks.h"
#include "tests/checks/trace/capture_test_util.h"

namespace graphcheck::testing_trace {
namespace {

using ::testing::HasSubstr;
using ::testing::SizeIs;

TEST(CuptiBusyTest, NamesTheSubscriberThatHeldCupti) {
  trace::Trace trace;
  trace.process.pid = 77;
  trace.recorder.subscribed = false;
  trace.recorder.other_subscriber = "CUPTI for Nsight Systems";
  trace.recorder.message = "CUPTI is held by another subscriber: CUPTI for Nsight Systems";
  const std::vector<Finding> findings = RunCheck(checks::NewCuptiBusyCheck(), trace);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].check_id, "cupti-busy");
  EXPECT_EQ(findings[0].severity, Severity::kError);
  EXPECT_THAT(findings[0].message, HasSubstr("Nsight Systems"));
  EXPECT_EQ(findings[0].where.pid, 77u);
}

TEST(CuptiBusyTest, CleanWhenTheRecorderSubscribed) {
  trace::Trace trace;
  EXPECT_THAT(RunCheck(checks::NewCuptiBusyCheck(), trace), SizeIs(0));
}

}  // namespace
}  // namespace graphcheck::testing_trace
