// ddp-default-stream over the probe's DDP events and the capture each forward ran in.
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

TEST(DdpDefaultStreamTest, FlagsTheConstructionLineWhenBackwardUsedTheLegacyStream) {
  const trace::Trace trace = FailedCapture([](TraceBuilder& b) {
    Constructed(b, /*on_default_stream=*/true);
    CapturedForward(b, 12, false);
    LegacyWait(b);
  });
  const std::vector<Finding> findings = RunCheck(checks::NewDdpDefaultStreamCheck(), trace);
  ASSERT_THAT(findings, SizeIs(1));
  const Finding& f = findings[0];
  EXPECT_EQ(f.check_id, "ddp-default-stream");
  EXPECT_EQ(f.severity, Severity::kError);
  ASSERT_FALSE(f.where.python.empty());
  EXPECT_THAT(f.where.python, Contains(::testing::Field(&SourceFrame::line, 12)));
  EXPECT_THAT(f.message, HasSubstr("default stream"));
  EXPECT_THAT(f.evidence, Contains(HasSubstr("cudaStreamWaitEvent failed with 906 (legacy-stream-in-capture)")));
  EXPECT_THAT(f.evidence, Contains(HasSubstr("train.py:40")));
  EXPECT_THAT(f.fix, HasSubstr("torch.cuda.stream(s)"));
}

TEST(DdpDefaultStreamTest, SilentWhenBuiltOnASideStreamOrWhenTheCaptureWorked) {
  // The seeds' recipe: built on a side stream; the same legacy-stream failure has another cause.
  EXPECT_THAT(RunCheck(checks::NewDdpDefaultStreamCheck(), FailedCapture([](TraceBuilder& b) {
                         Constructed(b, false);
                         CapturedForward(b, 12, false);
                         LegacyWait(b);
                       })),
              IsEmpty());
  // Built on the default stream, but the captured step did not touch the legacy stream (a forward-only graph).
  EXPECT_THAT(RunCheck(checks::NewDdpDefaultStreamCheck(), FailedCapture(
                                                               [](TraceBuilder& b) {
                                                                 Constructed(b, true);
                                                                 CapturedForward(b, 12, false);
                                                               },
                                                               0)),
              IsEmpty());
}

// The legacy-stream failure it explains is not a second finding; built on a side stream, it is
// legacy-stream-in-capture's.
TEST(DdpDefaultStreamTest, TheFailureItCausedIsNotASecondFinding) {
  auto failed = [](bool on_default_stream) {
    return FailedCapture([on_default_stream](TraceBuilder& b) {
      Constructed(b, on_default_stream);
      CapturedForward(b, 12, false);
      LegacyWait(b);
    });
  };
  EXPECT_THAT(RunCheck(checks::NewLegacyStreamInCaptureCheck(), failed(true)), IsEmpty());
  EXPECT_THAT(RunCheck(checks::NewLegacyStreamInCaptureCheck(), failed(false)), SizeIs(1));
}

TEST(DdpDefaultStreamTest, SilentWithoutDdp) {
  const trace::Trace trace = FailedCapture([](TraceBuilder& b) { EventSync(b); });
  EXPECT_THAT(RunCheck(checks::NewDdpDefaultStreamCheck(), trace), IsEmpty());
}

}  // namespace
}  // namespace graphcheck::testing_trace
