#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "checks/checks.h"
#include "tests/checks/trace/capture_test_util.h"

namespace graphcheck::testing_trace {
namespace {

using ::testing::HasSubstr;
using ::testing::SizeIs;

TEST(UnsafeApiInCaptureTest, FlagsAnotherThreadsQueryDuringGlobalCapture) {
  // NCCL's watchdog on thread 2 polls its event while thread 1 captures in global mode.
  const trace::Trace trace = FailedCapture([](TraceBuilder& b) {
    ApiCall& query = b.Call(3000, 2, "cudaEventQuery", ApiKind::kEventQuery, 9);
    query.return_code = 900;
  });
  const std::vector<Finding> findings = RunCheck(checks::NewUnsafeApiInCaptureCheck(), trace);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].where.api, "cudaEventQuery");
  EXPECT_EQ(findings[0].where.thread_id, 2u);
  EXPECT_THAT(findings[0].message, HasSubstr("global mode"));
  EXPECT_THAT(findings[0].evidence, ::testing::Contains(HasSubstr("not the capturing thread 1")));
  EXPECT_THAT(findings[0].consequences, ::testing::Contains(HasSubstr("cudaStreamEndCapture")));
  EXPECT_THAT(findings[0].fix, HasSubstr("thread_local"));
  EXPECT_THAT(RunCheck(checks::NewCaptureErrorCheck(), trace), SizeIs(0));
}

TEST(UnsafeApiInCaptureTest, NamesTheThreadWhenTheTraceHasItsName) {
  auto watchdog_query = [](const std::string& thread_name) {
    return FailedCapture([&](TraceBuilder& b) {
      b.trace().thread_names.push_back({2, b.Intern(thread_name)});
      ApiCall& query = b.Call(3000, 2, "cudaEventQuery", ApiKind::kEventQuery, 9);
      query.return_code = 900;
    });
  };
  std::vector<Finding> findings = RunCheck(checks::NewUnsafeApiInCaptureCheck(), watchdog_query("pt_nccl_watchdg"));
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].message, HasSubstr("ran on NCCL's watchdog thread 2 (pt_nccl_watchdg) while"));
  findings = RunCheck(checks::NewUnsafeApiInCaptureCheck(), watchdog_query("pin_memory"));
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].message, HasSubstr("ran on thread 2 (pin_memory) while"));
}

TEST(UnsafeApiInCaptureTest, FlagsAnotherThreadsEventSynchronizeDuringGlobalCapture) {
  // A watchdog's Event.synchronize(): no stream, so the recorder gave it the id of the capture active in the process.
  const trace::Trace trace = FailedCapture([](TraceBuilder& b) {
    ApiCall& sync = TraceBuilder::In(b.Call(3000, 2, "cudaEventSynchronize", ApiKind::kEventSynchronize), kCaptureId);
    sync.return_code = 900;
  });
  const std::vector<Finding> findings = RunCheck(checks::NewUnsafeApiInCaptureCheck(), trace);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].where.api, "cudaEventSynchronize");
  EXPECT_EQ(findings[0].where.thread_id, 2u);
  EXPECT_THAT(findings[0].message, HasSubstr("global mode"));
  EXPECT_THAT(RunCheck(checks::NewSyncInCaptureCheck(), trace), SizeIs(0));
  EXPECT_THAT(RunCheck(checks::NewCaptureErrorCheck(), trace), SizeIs(0));
}

TEST(UnsafeApiInCaptureTest, FlagsAQueryOfTheCapturingStream) {
  const trace::Trace trace = FailedCapture([](TraceBuilder& b) {
    ApiCall& query = TraceBuilder::In(b.Call(3000, 1, "cudaStreamQuery", ApiKind::kStreamQuery, kStream), kCaptureId);
    query.return_code = 900;
  });
  const std::vector<Finding> findings = RunCheck(checks::NewUnsafeApiInCaptureCheck(), trace);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].where.api, "cudaStreamQuery");
}

TEST(UnsafeApiInCaptureTest, OtherThreadsAreFreeDuringThreadLocalCapture) {
  const trace::Trace trace =
      FailedCapture([](TraceBuilder& b) { b.Call(3000, 2, "cudaEventQuery", ApiKind::kEventQuery, 9); }, 0,
                    CaptureMode::kThreadLocal);
  EXPECT_THAT(RunCheck(checks::NewUnsafeApiInCaptureCheck(), trace), SizeIs(0));
}

}  // namespace
}  // namespace graphcheck::testing_trace
