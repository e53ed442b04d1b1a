// grad-detached: gradients a captured backward writes that the program set to None (or replaced) between replays,
// with the optimizer stepping outside the graph: one finding per graph, at zero_grad() when a replay follows it (or
// at the replay that saw it); a zero_grad() after the last replay and a trace without such events are not reported.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "checks/checks.h"
#include "tests/checks/trace/probe_test_util.h"

namespace graphcheck::testing_trace {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

constexpr uint64_t kCudaGraph = 56;

void Capture(TraceBuilder& b) {
  b.Probe(900, 1, ProbeEventKind::kCaptureBegin, kGraph, ProbeOrigin::kUser).stack = TrainPyStack(b, 20);
  b.Begin(1000, 1, kStream);
  TraceBuilder::In(b.Launch(2000, 1, kStream, "gemm"), kCaptureId);
  b.End(3000, 1, kStream, kCaptureId, 0, 1).graph_id = kCudaGraph;
  b.Probe(3500, 1, ProbeEventKind::kCaptureEnd, kGraph);
}

void Detached(TraceBuilder& b, uint64_t t, const std::string& name, uint64_t now, bool attributed) {
  trace::ProbeEvent& e = b.Probe(t, 1, ProbeEventKind::kHostValueChanged, kGraph);
  e.type = b.Intern("grad");
  e.text = b.Intern(name);
  e.value = 0x7f0000a000;
  e.value_now = now;
  e.pool = attributed ? 1 : 0;
  e.stack = TrainPyStack(b, 47);
}

TEST(GradDetachedTest, ZeroGradBetweenReplaysIsReportedAtTheCall) {
  TraceBuilder b;
  Capture(b);
  b.Replay(4000, 1, kStream, kCudaGraph, 10, 100);
  Detached(b, 5000, "model.0.weight", 0, true);
  Detached(b, 5000, "model.0.bias", 0, true);
  b.Replay(6000, 1, kStream, kCudaGraph, 10, 100);
  const std::vector<Finding> findings = RunCheck(checks::NewGradDetachedCheck(), b.Build());
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].check_id, "grad-detached");
  EXPECT_EQ(findings[0].severity, Severity::kError);
  EXPECT_THAT(findings[0].message,
              HasSubstr("After this call the .grad of model.0.weight (and 1 more) is None, but the graph (captured at "
                        "/home/me/train.py:20 in body) still writes"));
  EXPECT_THAT(findings[0].message, HasSubstr("training stops after the first step"));
  EXPECT_EQ(FirstUserFrame(findings[0].where)->line, 47u);
  EXPECT_THAT(findings[0].evidence[0], HasSubstr("model.0.weight: .grad at 0x7f0000a000 at capture, None now"));
  EXPECT_THAT(findings[0].fix, HasSubstr("zero_grad(set_to_none=False)"));
}

TEST(GradDetachedTest, AGradientReplacedIsAnotherTensor) {
  TraceBuilder b;
  Capture(b);
  Detached(b, 5000, "model.0.weight", 0x7f0000b000, false);
  b.Replay(5100, 1, kStream, kCudaGraph, 10, 100);
  const std::vector<Finding> findings = RunCheck(checks::NewGradDetachedCheck(), b.Build());
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].message, HasSubstr("At this replay the .grad of model.0.weight is another tensor"));
  EXPECT_THAT(findings[0].evidence[0], HasSubstr("0x7f0000b000 now"));
}

TEST(GradDetachedTest, ZeroGradAfterTheLastReplayIsNotReported) {
  TraceBuilder b;
  Capture(b);
  b.Replay(4000, 1, kStream, kCudaGraph, 10, 100);
  Detached(b, 5000, "model.0.weight", 0, true);
  EXPECT_THAT(RunCheck(checks::NewGradDetachedCheck(), b.Build()), IsEmpty());
  TraceBuilder clean;
  Capture(clean);
  EXPECT_THAT(RunCheck(checks::NewGradDetachedCheck(), clean.Build()), IsEmpty());
}

}  // namespace
}  // namespace graphcheck::testing_trace
