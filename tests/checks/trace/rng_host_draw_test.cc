// rng-host-draw: a host random draw inside a capture the program replays is reported at the draw's line; a graph never
// replayed is left alone.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "checks/checks.h"
#include "tests/checks/trace/contract_test_util.h"

namespace graphcheck::testing_trace {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

// The findings on the program's capture with one host draw from `source` (`call`, at train.py:`line`), replayed after.
std::vector<Finding> DrawReplayed(const char* source, const char* call, uint32_t line) {
  TraceBuilder b;
  Capture(b);
  trace::ProbeEvent& e = b.Probe(2500, 1, ProbeEventKind::kHostRandomDraw, kGraph);
  e.type = b.Intern(source);
  e.text = b.Intern(call);
  e.stack = TrainPyStack(b, line);
  b.Replay(5000, 1, kStream, kCudaGraph, 10, 100);
  return Findings(checks::NewRngHostDrawCheck(), b);
}

TEST(RngHostDrawTest, ADrawInsideAReplayedCaptureIsReportedAtItsLine) {
  const std::vector<Finding> findings = DrawReplayed("python-random", "random.random", 30);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].message, HasSubstr("(random.random) inside the capture of a graph (captured at"));
  EXPECT_EQ(FirstUserFrame(findings[0].where)->line, 30u);
  EXPECT_EQ(findings[0].evidence[0], "generator: python-random");
}

TEST(RngHostDrawTest, AClockReadInsideACaptureIsReportedAsTheTimeItHolds) {
  const std::vector<Finding> findings = DrawReplayed("clock", "time.time", 31);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].message, HasSubstr("This line reads the host clock (time.time) inside the capture"));
  EXPECT_THAT(findings[0].message, HasSubstr("holds the time read at capture"));
}

// next() of an iterator the program keeps (blind set 3, cycle-task-order): the item taken at capture is replayed.
TEST(RngHostDrawTest, TheNextItemOfAKeptIteratorIsReportedAsTheItemItHolds) {
  const std::vector<Finding> findings = DrawReplayed("iterator", "next(order)", 32);
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
