#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "checks/checks.h"
#include "tests/checks/trace/capture_test_util.h"

namespace graphcheck::testing_trace {
namespace {

using ::testing::HasSubstr;
using ::testing::SizeIs;

// Capture on stream 7 forks stream 9 (9 waits on an event recorded on 7) and launches on 9.
trace::Trace Fork(bool join) {
  TraceBuilder b;
  b.Begin(1000, 1, kStream);
  TraceBuilder::In(b.Call(2000, 1, "cudaEventRecord", ApiKind::kEventRecord, kStream), kCaptureId);
  b.Call(2100, 1, "cudaStreamWaitEvent", ApiKind::kStreamWaitEvent, 9).other_stream_id = kStream;
  TraceBuilder::In(b.Launch(2200, 1, 9, "side_kernel"), kCaptureId);
  if (join) {
    TraceBuilder::In(b.Call(2300, 1, "cudaEventRecord", ApiKind::kEventRecord, 9), kCaptureId);
    TraceBuilder::In(b.Call(2400, 1, "cudaStreamWaitEvent", ApiKind::kStreamWaitEvent, kStream), kCaptureId)
        .other_stream_id = 9;
  }
  b.End(5000, 1, kStream, kCaptureId, join ? 0 : 904, 3);
  return b.Build();
}

TEST(UnjoinedStreamTest, NamesTheForkedStreamThatWasNotJoined) {
  const std::vector<Finding> findings = RunCheck(checks::NewUnjoinedStreamCheck(), Fork(false));
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].where.api, "cudaStreamEndCapture");
  EXPECT_THAT(findings[0].message, HasSubstr("failed with 904: stream 9 forked from the capturing stream and was not "
                                             "joined back before the end."));
  EXPECT_THAT(findings[0].fix, HasSubstr("wait_stream"));
  EXPECT_THAT(RunCheck(checks::NewCaptureErrorCheck(), Fork(false)), SizeIs(0));
}

TEST(UnjoinedStreamTest, JoinedForkIsClean) {
  EXPECT_THAT(RunCheck(checks::NewUnjoinedStreamCheck(), Fork(true)), SizeIs(0));
}

}  // namespace
}  // namespace graphcheck::testing_trace
