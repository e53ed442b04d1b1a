// trace-incomplete: losses during a capture are errors (that capture's verdict is unknown), losses outside captures
// warnings, damage or an empty trace errors, a trace without a clean end a note; a complete trace gives nothing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "checks/checks.h"
#include "tests/checks/trace/capture_test_util.h"

namespace graphcheck::testing_trace {
namespace {

using ::testing::HasSubstr;
using ::testing::SizeIs;

// A clean capture from 1000 to 5000 ns, recorded by a 1.2 recorder that stopped cleanly.
trace::Trace CompleteTrace() {
  trace::Trace trace = FailedCapture([](TraceBuilder&) {}, /*end_rc=*/0);
  trace.process.pid = 9;
  trace.integrity.end = trace::TraceEnd::kClean;
  trace.integrity.chunks = 1;
  return trace;
}

std::vector<Finding> RunTraceIncomplete(const trace::Trace& trace) {
  return RunCheck(checks::NewTraceIncompleteCheck(), trace);
}

TEST(TraceIncompleteTest, ACompleteTraceIsClean) { EXPECT_THAT(RunTraceIncomplete(CompleteTrace()), SizeIs(0)); }

TEST(TraceIncompleteTest, AnOlderTraceWithoutAccountingIsClean) {
  trace::Trace trace = CompleteTrace();
  trace.integrity.end = trace::TraceEnd::kUnknown;
  EXPECT_THAT(RunTraceIncomplete(trace), SizeIs(0));
}

TEST(TraceIncompleteTest, ActivityLostDuringACaptureMakesItsVerdictUnknown) {
  trace::Trace trace = CompleteTrace();
  trace.integrity.losses.push_back({trace::LossKind::kActivityDropped, 120, 2500, 2600});
  trace::RecorderError error;
  error.kind = trace::LossKind::kActivityDropped;
  error.time_ns = 2600;
  error.count = 120;
  error.context_id = 1;
  error.stream_id = 7;
  trace.integrity.errors.push_back(error);
  const std::vector<Finding> findings = RunTraceIncomplete(trace);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].check_id, "trace-incomplete");
  EXPECT_EQ(findings[0].severity, Severity::kError);
  EXPECT_THAT(findings[0].message, HasSubstr("120 GPU activity records dropped"));
  EXPECT_THAT(findings[0].message, HasSubstr("while 1 capture ran: their verdict is unknown, not clean"));
  EXPECT_THAT(findings[0].evidence, ::testing::Contains(HasSubstr("capture on stream 7")));
  EXPECT_THAT(findings[0].evidence, ::testing::Contains(HasSubstr("context 1 stream 7")));
  EXPECT_EQ(findings[0].where.pid, 9u);
}

TEST(TraceIncompleteTest, LossesOutsideEveryCaptureAreAWarning) {
  trace::Trace trace = CompleteTrace();
  trace.integrity.losses.push_back({trace::LossKind::kActivityDropped, 3, 9000, 9500});
  const std::vector<Finding> findings = RunTraceIncomplete(trace);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].severity, Severity::kWarning);
  EXPECT_THAT(findings[0].message, HasSubstr("outside every capture"));
}

TEST(TraceIncompleteTest, ASingleLostRecordIsNamedInTheSingular) {
  trace::Trace trace = CompleteTrace();
  trace.integrity.losses.push_back({trace::LossKind::kActivityDropped, 1, 9000, 9500});
  const std::vector<Finding> findings = RunTraceIncomplete(trace);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].message, HasSubstr("The recorder lost 1 GPU activity record dropped by CUPTI"));
}

TEST(TraceIncompleteTest, LossesThatMeetTwoCapturesCountThem) {
  TraceBuilder b;
  b.Begin(1000, 1, kStream);
  TraceBuilder::In(b.Launch(2000, 1, kStream, "gemm"), kCaptureId);
  b.End(3000, 1, kStream, kCaptureId, 0, 1);
  b.Begin(4000, 1, kStream);
  TraceBuilder::In(b.Launch(5000, 1, kStream, "gemm"), kCaptureId + 1);
  b.End(6000, 1, kStream, kCaptureId + 1, 0, 2);
  trace::Trace trace = b.Build();
  trace.integrity.end = trace::TraceEnd::kClean;
  trace.integrity.chunks = 1;
  trace.integrity.losses.push_back({trace::LossKind::kWriterDropped, 1, 0, 0});  // no times: may have hit either
  const std::vector<Finding> findings = RunTraceIncomplete(trace);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].message, HasSubstr("lost 1 record the trace writer could not place"));
  EXPECT_THAT(findings[0].message, HasSubstr("while 2 captures ran: their verdict is unknown, not clean"));
}

// The sampler turning launch recording off drops the launches in flight at that moment by design (seen on an H100 on
// clean timm ResNet-18 training: one launch per window edge): outside captures that is no loss to report; inside one
// it still makes the capture's verdict unknown.
TEST(TraceIncompleteTest, LaunchesDroppedAtTheSamplersSwitchAreNoLossOutsideCaptures) {
  trace::Trace outside = CompleteTrace();
  outside.integrity.losses.push_back({trace::LossKind::kLaunchExitLost, 1, 9000, 9000});
  EXPECT_THAT(RunTraceIncomplete(outside), SizeIs(0));
  trace::Trace inside = CompleteTrace();
  inside.integrity.losses.push_back({trace::LossKind::kLaunchExitLost, 1, 2500, 2500});
  const std::vector<Finding> findings = RunTraceIncomplete(inside);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].severity, Severity::kError);
}

TEST(TraceIncompleteTest, AWriterThatCouldNotPlaceRecordsIsAnErrorWhenACaptureOverlaps) {
  trace::Trace trace = CompleteTrace();
  trace.integrity.losses.push_back({trace::LossKind::kWriterDropped, 5000, 4000, 90000});
  const std::vector<Finding> findings = RunTraceIncomplete(trace);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].severity, Severity::kError);
  EXPECT_THAT(findings[0].fix, HasSubstr("--trace-dir"));
}

TEST(TraceIncompleteTest, ADamagedTraceIsAnError) {
  trace::Trace trace = CompleteTrace();
  trace.read_warnings.push_back("offset 4096: truncated chunk: 100 of 5000 committed bytes present");
  const std::vector<Finding> findings = RunTraceIncomplete(trace);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].severity, Severity::kError);
  EXPECT_THAT(findings[0].evidence[0], HasSubstr("truncated chunk"));
  EXPECT_THAT(findings[0].message, HasSubstr("The trace is damaged (1 problem the reader stepped over)"));
  trace.read_warnings.push_back("offset 8192: corrupt chunk");
  EXPECT_THAT(RunTraceIncomplete(trace)[0].message, HasSubstr("The trace is damaged (2 problems the reader stepped"));
}

TEST(TraceIncompleteTest, ATraceCutAfterItsHeaderIsAnError) {
  trace::Trace trace;  // what the reader returns for a file that ends after its header: no chunk at all
  trace.integrity.file_bytes = 4096;
  const std::vector<Finding> findings = RunTraceIncomplete(trace);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].severity, Severity::kError);
  EXPECT_THAT(findings[0].message, HasSubstr("holds no records"));
}

TEST(TraceIncompleteTest, ATraceWithoutACleanEndIsANote) {
  trace::Trace trace = CompleteTrace();
  trace.integrity.end = trace::TraceEnd::kRunning;
  const std::vector<Finding> findings = RunTraceIncomplete(trace);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].severity, Severity::kNote);
  EXPECT_THAT(findings[0].message, HasSubstr("SIGKILL"));
}

// Seen on an H100: torch.compile's forked compile workers make no CUDA call and end without exit handlers.
TEST(TraceIncompleteTest, AProcessThatMadeNoCudaCallAndEndedWithoutHandlersIsClean) {
  trace::Trace trace;
  trace.integrity.file_bytes = 8192;
  trace.integrity.chunks = 1;
  trace.integrity.end = trace::TraceEnd::kRunning;
  EXPECT_THAT(RunTraceIncomplete(trace), SizeIs(0));
}

TEST(TraceIncompleteTest, ACrashNamesItsSignal) {
  trace::Trace trace = CompleteTrace();
  trace.integrity.end = trace::TraceEnd::kCrashed;
  trace.integrity.signal = 11;
  const std::vector<Finding> findings = RunTraceIncomplete(trace);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].severity, Severity::kNote);
  EXPECT_THAT(findings[0].message, HasSubstr("SIGSEGV"));
}

}  // namespace
}  // namespace graphcheck::testing_trace
