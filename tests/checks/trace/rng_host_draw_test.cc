// rng-host-draw: a host random draw inside a capture the program replays is reported at the draw's line; a graph never
// replayed is left alone.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "checks/checks.h"
#include "tests/checks/trace/contract_test_util.h"

namespace graphcheck::testing_trace {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

TEST(RngHostDrawTest, ADrawInsideAReplayedCaptureIsReportedAtItsLine) {
  TraceBuilder b;
  Capture(b);
  trace::ProbeEvent& e = b.Probe(2500, 1, ProbeEventKind::kHostRandomDraw, kGraph);
  e.type = b.Intern("python-random");
  e.text = b.Intern("random.random");
  e.stack = TrainPyStack(b, 30);
  b.Replay(5000, 1, kStream, kCudaGraph, 10, 100);
  const std::vector<Finding> findings = Findings(checks::NewRngHostDrawCheck(), b);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].message, HasSubstr("(random.random) inside the capture of a graph (captured at"));
  EXPECT_EQ(FirstUserFrame(findings[0].where)->line, 30u);
  EXPECT_EQ(findings[0].evidence[0], "generator: python-random");
}

TEST(RngHostDrawTest, AClockReadInsideACaptureIsReportedAsTheTimeItHolds) {
  TraceBuilder b;
  Capture(b);
  trace::ProbeEvent& e = b.Probe(2500, 1, ProbeEventKind::kHostRandomDraw, kGraph);
  e.type = b.Intern("clock");
  e.text = b.Intern("time.time");
  e.stack = TrainPyStack(b, 31);
  b.Replay(5000, 1, kStream, kCudaGraph, 10, 100);
  const std::vector<Finding> findings = Findings(checks::NewRngHostDrawCheck(), b);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].message, HasSubstr("This line reads the host clock (time.time) inside the capture"));
  EXPECT_THAT(findings[0].message, HasSubstr("holds the time read at capture"));
}

// next() of an iterator the program keeps (blind set 3, cycle-task-order): the item taken at capture is replayed.
TEST(RngHostDrawTest, TheNextItemOfAKeptIteratorIsReportedAsTheItemItHolds) {
  TraceBuilder b;
  Capture(b);
  trace::ProbeEvent& e = b.Probe(2500, 1, ProbeEventKind::kHostRandomDraw, kGraph);
  e.type = b.Intern("iterator");
  e.text = b.Intern("next(order)");
  e.stack = TrainPyStack(b, 32);
  b.Replay(5000, 1, kStream, kCudaGraph, 10, 100);
  const std::vector<Finding> findings = Findings(checks::NewRngHostDrawCheck(), b);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].message, HasSubstr("takes the next item of an iterator the program keeps (next(order))"));
  EXPECT_THAT(findings[0].message, HasSubstr("does not advance the iterator"));
  EXPECT_THAT(findings[0].fix, HasSubstr("copy it into a static CUDA tensor"));
  EXPECT_EQ(FirstUserFrame(findings[0].where)->line, 32u);
  EXPECT_EQ(findings[0].evidence[0], "generator: iterator");
}

TEST(RngHostDrawTest, AGraphNeverReplayedIsLeftAlone) {
  TraceBuilder b;
  Capture(b);
  trace::ProbeEvent& e = b.Probe(2500, 1, ProbeEventKind::kHostRandomDraw, kGraph);
  e.type = b.Intern("torch-cpu");
  EXPECT_THAT(Findings(checks::NewRngHostDrawCheck(), b), IsEmpty());
}

}  // namespace
}  // namespace graphcheck::testing_trace
