// ddp-warmup-short over the probe's DDP events and the capture each forward ran in.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "checks/checks.h"
#include "tests/checks/trace/ddp_test_util.h"

namespace graphcheck::testing_trace {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

TEST(DdpWarmupShortTest, FlagsACaptureBeforeElevenWarmupIterations) {
  const trace::Trace trace = FailedCapture([](TraceBuilder& b) {
    Constructed(b, false);
    CapturedForward(b, 2, /*rebuilt=*/true);
    EventSync(b);
  });
  const std::vector<Finding> findings = RunCheck(checks::NewDdpWarmupShortCheck(), trace);
  ASSERT_THAT(findings, SizeIs(1));
  const Finding& f = findings[0];
  EXPECT_EQ(f.check_id, "ddp-warmup-short");
  EXPECT_EQ(f.severity, Severity::kError);
  EXPECT_THAT(f.message, HasSubstr("after 1 eager iteration (DDP needs 11)"));
  EXPECT_THAT(f.where.python, Contains(::testing::Field(&SourceFrame::line, 40)));
  EXPECT_THAT(f.evidence, Contains("DDP rebuilt its gradient buckets inside the capture"));
  EXPECT_THAT(f.evidence, Contains(HasSubstr("cudaEventSynchronize failed with 900 (sync-in-capture)")));
  EXPECT_THAT(f.fix, HasSubstr("at least 11"));
}

TEST(DdpWarmupShortTest, TenWarmupIterationsAreShortAndElevenAreEnough) {
  // On the H100, capture after 10 warmup iterations (forward 11) failed and after 11 (forward 12) worked.
  EXPECT_THAT(RunCheck(checks::NewDdpWarmupShortCheck(), FailedCapture([](TraceBuilder& b) {
                         CapturedForward(b, 11, false);
                         EventSync(b);
                       })),
              SizeIs(1));
  EXPECT_THAT(RunCheck(checks::NewDdpWarmupShortCheck(), FailedCapture(
                                                             [](TraceBuilder& b) {
                                                               Constructed(b, false);
                                                               CapturedForward(b, 12, false);
                                                             },
                                                             0)),
              IsEmpty());
  // The threshold is an option.
  CheckOptions twenty;
  twenty.Set("ddp-warmup-short", "min-warmup", "20");
  EXPECT_THAT(RunCheck(checks::NewDdpWarmupShortCheck(),
                       FailedCapture([](TraceBuilder& b) { CapturedForward(b, 12, false); }, 0), twenty),
              SizeIs(1));
}

// Where this check names the cause, sync-in-capture says nothing of the same failure: one defect, one finding. A
// capture that failed before DDP's 11 iterations is named even when min-warmup was set lower, since sync-in-capture
// leaves it to this check.
TEST(DdpWarmupShortTest, TheFailureItCausedIsNotASecondFinding) {
  const trace::Trace early = FailedCapture([](TraceBuilder& b) {
    CapturedForward(b, 3, false);
    EventSync(b);
  });
  EXPECT_THAT(RunCheck(checks::NewSyncInCaptureCheck(), early), IsEmpty());
  CheckOptions two;
  two.Set("ddp-warmup-short", "min-warmup", "2");
  EXPECT_THAT(RunCheck(checks::NewDdpWarmupShortCheck(), early, two), SizeIs(1));
  // After the warmup DDP needs, the same synchronization is sync-in-capture's.
  const trace::Trace warmed = FailedCapture([](TraceBuilder& b) {
    CapturedForward(b, 12, false);
    EventSync(b);
  });
  EXPECT_THAT(RunCheck(checks::NewSyncInCaptureCheck(), warmed), SizeIs(1));
  EXPECT_THAT(RunCheck(checks::NewDdpWarmupShortCheck(), warmed), IsEmpty());
}

TEST(DdpWarmupShortTest, SilentWithoutDdp) {
  const trace::Trace trace = FailedCapture([](TraceBuilder& b) { EventSync(b); });
  EXPECT_THAT(RunCheck(checks::NewDdpWarmupShortCheck(), trace), IsEmpty());
}

}  // namespace
}  // namespace graphcheck::testing_trace
