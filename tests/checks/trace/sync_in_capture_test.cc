#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "checks/checks.h"
#include "tests/checks/trace/capture_test_util.h"

namespace graphcheck::testing_trace {
namespace {

using ::testing::HasSubstr;
using ::testing::SizeIs;

trace::Trace ItemInCapture() {
  return FailedCapture([](TraceBuilder& b) {
    b.Push(500, 1, "train_step");
    b.Push(600, 1, "forward");
    const trace::BacktraceId bt = b.Backtrace(ItemFrames());
    ApiCall& sync =
        TraceBuilder::In(b.Call(3000, 1, "cudaStreamSynchronize", ApiKind::kStreamSynchronize, kStream), kCaptureId);
    sync.return_code = 900;
    sync.backtrace = bt;
  });
}

TEST(SyncInCaptureTest, FlagsTheSyncAndListsWhatItBroke) {
  const std::vector<Finding> findings = RunCheck(checks::NewSyncInCaptureCheck(), ItemInCapture());
  ASSERT_THAT(findings, SizeIs(1));
  const Finding& f = findings[0];
  EXPECT_EQ(f.check_id, "sync-in-capture");
  EXPECT_EQ(f.severity, Severity::kError);
  EXPECT_EQ(f.where.api, "cudaStreamSynchronize");
  EXPECT_EQ(f.where.thread_id, 1u);
  EXPECT_EQ(f.where.stream_id, kStream);
  EXPECT_EQ(f.where.pid, 4242u);
  EXPECT_EQ(f.where.nvtx_path, "train_step/forward");
  EXPECT_EQ(f.where.torch_op, "aten::_local_scalar_dense");
  EXPECT_EQ(f.where.backtrace.front(), "cudaStreamSynchronize");
  EXPECT_THAT(f.message, HasSubstr("Tensor.item()"));
  EXPECT_THAT(f.evidence[0], HasSubstr("900 cudaErrorStreamCaptureUnsupported"));
  ASSERT_THAT(f.consequences, SizeIs(2));
  EXPECT_THAT(f.consequences[0], HasSubstr("cudaLaunchKernel"));
  EXPECT_THAT(f.consequences[1], HasSubstr("cudaStreamEndCapture"));
  EXPECT_THAT(f.consequences[1], HasSubstr("901 cudaErrorStreamCaptureInvalidated"));
  EXPECT_FALSE(f.fix.empty());
}

TEST(SyncInCaptureTest, TheCaptureErrorsItCausedAreNotReportedAgain) {
  EXPECT_THAT(RunCheck(checks::NewCaptureErrorCheck(), ItemInCapture()), SizeIs(0));
}

TEST(SyncInCaptureTest, OneFindingForTheSameSiteInEveryCapture) {
  TraceBuilder b;
  const trace::BacktraceId bt = b.Backtrace(ItemFrames());
  for (uint64_t c = 0; c < 3; ++c) {
    const uint64_t t = c * 10000;
    b.Begin(t + 1000, 1, kStream);
    ApiCall& sync =
        TraceBuilder::In(b.Call(t + 2000, 1, "cudaStreamSynchronize", ApiKind::kStreamSynchronize, kStream), 100 + c);
    sync.return_code = 900;
    sync.backtrace = bt;
    b.End(t + 3000, 1, kStream, 100 + c, 901, 0);
  }
  const std::vector<Finding> findings = RunCheck(checks::NewSyncInCaptureCheck(), b.Build());
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].evidence, ::testing::Contains(HasSubstr("seen 3 times at this call site in 3 capture")));
  ASSERT_THAT(findings[0].consequences, SizeIs(1));
  EXPECT_THAT(findings[0].consequences[0], HasSubstr("(3 calls)"));
}

TEST(SyncInCaptureTest, CleanCaptureAndEagerSyncsAreLeftAlone) {
  TraceBuilder b;
  b.Call(100, 1, "cudaStreamSynchronize", ApiKind::kStreamSynchronize, kStream);
  b.Begin(1000, 1, kStream);
  TraceBuilder::In(b.Launch(2000, 1, kStream, "gemm"), kCaptureId);
  b.End(5000, 1, kStream, kCaptureId, 0, 1);
  b.Call(6000, 1, "cudaDeviceSynchronize", ApiKind::kDeviceSynchronize);
  EXPECT_THAT(RunCheck(checks::NewSyncInCaptureCheck(), b.Build()), SizeIs(0));
}

}  // namespace
}  // namespace graphcheck::testing_trace
