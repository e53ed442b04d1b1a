// state-made-in-capture: a buffer replaced inside the capture that the graph still reads, and optimizer state a
// first step inside the capture created, are reported at their lines; a replaced tensor the graph does not read, or
// no event, is left alone.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "checks/checks.h"
#include "tests/checks/trace/contract_test_util.h"

namespace graphcheck::testing_trace {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

// A state-made-in-capture event for the capture's graph: `type` replaced (or created) at train.py:`line`.
trace::ProbeEvent& StateMade(TraceBuilder& b, const char* type, const char* text, uint64_t before, uint64_t bytes,
                             int line) {
  trace::ProbeEvent& e = b.Probe(3700, 1, ProbeEventKind::kStateMadeInCapture, kGraph);
  e.type = b.Intern(type);
  e.text = b.Intern(text);
  e.value = before;
  e.pool = bytes;
  e.value_now = kPoolSegment + 0x300;
  e.stack = TrainPyStack(b, line);
  return e;
}

TEST(StateMadeInCaptureTest, ABufferReplacedInsideTheCaptureThatTheGraphReadsIsReportedAtItsLine) {
  TraceBuilder b;
  Capture(b);
  StateMade(b, "buffer", "model.buf", kBuffer, 0x400, 52);
  StateMade(b, "buffer", "model.other", kBuffer + 0x400, 0x400, 53);  // not read by the graph: not listed
  b.Replay(5000, 1, kStream, kCudaGraph, 10, 100);
  const std::vector<Finding> findings = Findings(checks::NewStateMadeInCaptureCheck(), b);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].severity, Severity::kError);
  EXPECT_THAT(findings[0].message,
              HasSubstr("This line replaces the buffer model.buf inside the capture (captured at"));
  EXPECT_THAT(findings[0].message, HasSubstr("every replay computes it again from the value before the capture"));
  EXPECT_THAT(findings[0].evidence[0], ::testing::EndsWith("read by the graph: buffer model.buf"));
  EXPECT_THAT(findings[0].fix, HasSubstr("self.ema.mul_(0.9)"));
  EXPECT_EQ(FirstUserFrame(findings[0].where)->line, 52u);
}

TEST(StateMadeInCaptureTest, OptimizerStateCreatedByAFirstStepInsideTheCaptureIsReportedAtTheStep) {
  TraceBuilder b;
  Capture(b);
  StateMade(b, "optimizer-state", "Adam exp_avg of model.fc.weight, Adam exp_avg_sq of model.fc.weight", 0, 3, 40);
  const std::vector<Finding> findings = Findings(checks::NewStateMadeInCaptureCheck(), b);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].message, HasSubstr("created the optimizer's state there (3 tensors"));
  EXPECT_THAT(findings[0].evidence[0], HasSubstr("Adam exp_avg of model.fc.weight"));
  EXPECT_THAT(findings[0].fix, HasSubstr("optimizer.step() included"));
  EXPECT_EQ(FirstUserFrame(findings[0].where)->line, 40u);
}

TEST(StateMadeInCaptureTest, AReplacedTensorTheGraphDoesNotReadOrNoEventIsLeftAlone) {
  TraceBuilder b;
  Capture(b);
  StateMade(b, "buffer", "model.cache", 0x7f0000900000, 0x400, 52);  // a cache rebuilt from scratch
  b.Replay(5000, 1, kStream, kCudaGraph, 10, 100);
  EXPECT_THAT(Findings(checks::NewStateMadeInCaptureCheck(), b), IsEmpty());
  TraceBuilder clean;
  Capture(clean);
  clean.Replay(5000, 1, kStream, kCudaGraph, 10, 100);
  EXPECT_THAT(Findings(checks::NewStateMadeInCaptureCheck(), clean), IsEmpty());
}

}  // namespace
}  // namespace graphcheck::testing_trace
