// static-input-rebound: a static input the probe saw rebound at a replay is reported with both addresses, the
// capture's line and the replay's; parameters and a trace without such events are not.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "checks/checks.h"
#include "tests/checks/trace/probe_test_util.h"

namespace graphcheck::testing_trace {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

TEST(StaticInputReboundTest, AReboundStaticInputIsReportedAtTheReplay) {
  TraceBuilder b;
  b.Probe(100, 1, ProbeEventKind::kCaptureBegin, kGraph, ProbeOrigin::kUser).stack = TrainPyStack(b, 14);
  b.Probe(200, 1, ProbeEventKind::kCaptureEnd, kGraph);
  b.Rebound(1000, 1, kGraph, "static-input", "static_x", 0x7f0000001000, 0x7f0000003000).stack = TrainPyStack(b, 22);
  const std::vector<Finding> findings = RunCheck(checks::NewStaticInputReboundCheck(), b.Build());
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].check_id, "static-input-rebound");
  EXPECT_EQ(findings[0].severity, Severity::kError);
  EXPECT_THAT(findings[0].message,
              HasSubstr("`static_x`, a static input of the graph (captured at /home/me/train.py:14 in body), holds "
                        "another tensor at this replay"));
  EXPECT_THAT(findings[0].evidence[0], HasSubstr("0x7f0000001000 at capture, 0x7f0000003000 at the replay"));
  ASSERT_NE(FirstUserFrame(findings[0].where), nullptr);
  EXPECT_EQ(FirstUserFrame(findings[0].where)->line, 22u);
  EXPECT_THAT(findings[0].fix, HasSubstr("static_x.copy_(batch)"));
}

TEST(StaticInputReboundTest, ParametersAndCleanTracesAreNotStaticInputs) {
  TraceBuilder clean;
  clean.Probe(100, 1, ProbeEventKind::kCaptureBegin, kGraph, ProbeOrigin::kUser);
  EXPECT_THAT(RunCheck(checks::NewStaticInputReboundCheck(), clean.Build()), IsEmpty());
  TraceBuilder module;
  module.Rebound(1000, 1, kGraph, "parameter", "0.weight", 0x1000, 0x2000);
  EXPECT_THAT(RunCheck(checks::NewStaticInputReboundCheck(), module.Build()), IsEmpty());
}

// A static input whose memory was freed (its name rebound and nothing else holding it, a pinned host batch dropped)
// is graph-reads-freed's, at the line that dropped it.
TEST(StaticInputReboundTest, AFreedStaticInputIsLeftToGraphReadsFreed) {
  TraceBuilder b;
  b.Probe(100, 1, ProbeEventKind::kCaptureBegin, kGraph, ProbeOrigin::kUser);
  b.Rebound(1000, 1, kGraph, "static-input", "host_batch", 0x7f0000001000, 0).pool = 1;
  EXPECT_THAT(RunCheck(checks::NewStaticInputReboundCheck(), b.Build()), IsEmpty());
}

}  // namespace
}  // namespace graphcheck::testing_trace
