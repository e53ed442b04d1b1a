// The shared capture pass: windows, forks and joins, and the attribution of failures to one root cause.
#include "analysis/capture_windows.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cli/catalog.h"
#include "tests/checks/trace/capture_test_util.h"

namespace graphcheck::testing_trace {
namespace {

using analysis::CaptureAnalysis;
using analysis::CaptureCause;
using ::testing::ElementsAre;
using ::testing::SizeIs;

TEST(CaptureWindowsTest, FindsTheWindowWithItsCapturedWork) {
  TraceBuilder b;
  b.Begin(1000, 1, kStream);
  TraceBuilder::In(b.Launch(2000, 1, kStream, "gemm"), kCaptureId);
  TraceBuilder::In(b.Launch(3000, 1, kStream, "relu"), kCaptureId);
  b.End(4000, 1, kStream, kCaptureId, 0, 2);
  const trace::Trace trace = b.Build();
  CaptureAnalysis analysis(trace);
  ASSERT_THAT(analysis.windows(), SizeIs(1));
  const analysis::CaptureWindow& window = analysis.windows()[0];
  EXPECT_EQ(window.stream_id, kStream);
  EXPECT_EQ(window.thread_id, 1u);
  EXPECT_EQ(window.captured_operations, 2u);
  ASSERT_TRUE(window.end_call.has_value());
  EXPECT_TRUE(analysis.problems().empty());
}

// What a real failing capture looks like (torch 2.11 on an H200, examples/traces/capture_item): the graph pool grows
// with successful cudaMalloc calls before the .item() sync is refused with 900. The sync is the one root cause; the
// 901s after it are its consequences, and the successful allocations are nobody's cause.
TEST(CaptureWindowsTest, TheRefusedCallIsTheRootCauseNotEarlierSuccessfulOnes) {
  const trace::Trace trace = FailedCapture([](TraceBuilder& b) {
    b.Call(2500, 1, "cudaMalloc", ApiKind::kMalloc).capture_status = CaptureStatus::kActive;
    ApiCall& sync =
        TraceBuilder::In(b.Call(3000, 1, "cudaStreamSynchronize", ApiKind::kStreamSynchronize, kStream), kCaptureId);
    sync.return_code = 900;
  });
  CaptureAnalysis analysis(trace);
  ASSERT_THAT(analysis.problems(), SizeIs(1));
  const analysis::CaptureProblem& problem = analysis.problems()[0];
  EXPECT_EQ(problem.cause, CaptureCause::kSync);
  EXPECT_TRUE(problem.failed);
  std::vector<int32_t> codes;
  for (const analysis::Consequence& c : problem.consequences) codes.push_back(c.return_code);
  EXPECT_THAT(codes, ElementsAre(901, 901));  // the launch after it and the capture end
}

TEST(CaptureWindowsTest, AnUnexplainedFailureIsItsOwnRootCause) {
  const trace::Trace trace = FailedCapture([](TraceBuilder&) {});
  CaptureAnalysis analysis(trace);
  ASSERT_FALSE(analysis.problems().empty());
  EXPECT_EQ(analysis.problems()[0].cause, CaptureCause::kUnexplained);
}

TEST(CaptureWindowsTest, NamesTheForkedStreamThatWasNotJoined) {
  constexpr uint64_t kSide = 9;
  TraceBuilder b;
  b.Begin(1000, 1, kStream);
  TraceBuilder::In(b.Call(1500, 1, "cudaEventRecord", ApiKind::kEventRecord, kStream), kCaptureId);
  ApiCall& fork =
      TraceBuilder::In(b.Call(2000, 1, "cudaStreamWaitEvent", ApiKind::kStreamWaitEvent, kSide), kCaptureId);
  fork.other_stream_id = kStream;
  TraceBuilder::In(b.Launch(3000, 1, kSide, "scale"), kCaptureId);
  b.End(4000, 1, kStream, kCaptureId, 904, 0);
  const trace::Trace trace = b.Build();
  CaptureAnalysis analysis(trace);
  ASSERT_THAT(analysis.windows(), SizeIs(1));
  EXPECT_THAT(analysis.windows()[0].forked_streams, ElementsAre(kSide));
  EXPECT_THAT(analysis.windows()[0].unjoined_streams, ElementsAre(kSide));
  ASSERT_THAT(analysis.problems(), SizeIs(1));
  EXPECT_EQ(analysis.problems()[0].cause, CaptureCause::kUnjoinedStream);
}

// Every cause names a registered check: the evidence lines of ddp-* point at the finding beside them.
TEST(CaptureWindowsTest, EveryCauseNamesARegisteredCheck) {
  for (int cause = 0; cause <= static_cast<int>(analysis::CaptureCause::kUnexplained); ++cause) {
    const absl::string_view id = analysis::CauseCheckId(static_cast<analysis::CaptureCause>(cause));
    EXPECT_NE(BuiltinChecks().Find(id), nullptr) << id;
  }
}

}  // namespace
}  // namespace graphcheck::testing_trace
