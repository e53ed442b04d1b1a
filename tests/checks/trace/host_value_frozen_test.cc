// host-value-frozen: a float hyperparameter of an optimizer that stepped inside a capture, or a number a graphed
// module's forward reads, changed while the graph is replayed: reported at the call that changed it (when a replay
// follows) or at the replay that saw it, with both values; a change no replay follows, a module --shadow compared and
// a trace without such events are not.
#include <cstring>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "checks/checks.h"
#include "tests/checks/trace/probe_test_util.h"

namespace graphcheck::testing_trace {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

constexpr uint64_t kCudaGraph = 55;

uint64_t Bits(double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

// The program's whole-step capture (Python graph kGraph, CUDA graph kCudaGraph) at train.py:12.
void Capture(TraceBuilder& b) {
  b.Probe(900, 1, ProbeEventKind::kCaptureBegin, kGraph, ProbeOrigin::kUser).stack = TrainPyStack(b, 12);
  b.Begin(1000, 1, kStream);
  TraceBuilder::In(b.Launch(2000, 1, kStream, "adam"), kCaptureId);
  b.End(3000, 1, kStream, kCaptureId, 0, 1).graph_id = kCudaGraph;
  b.Probe(3500, 1, ProbeEventKind::kCaptureEnd, kGraph);
}

trace::ProbeEvent& Changed(TraceBuilder& b, uint64_t t, uint64_t graph, const std::string& role,
                           const std::string& name, double captured, double now, bool attributed, uint32_t line) {
  trace::ProbeEvent& e = b.Probe(t, 1, ProbeEventKind::kHostValueChanged, graph);
  e.type = b.Intern(role);
  e.text = b.Intern(name);
  e.value = Bits(captured);
  e.value_now = Bits(now);
  e.pool = attributed ? 1 : 0;
  e.stack = TrainPyStack(b, line);
  return e;
}

// The findings on the program's capture replayed before and after one change (Changed's arguments from `role` on).
std::vector<Finding> ChangedBetweenReplays(const std::string& role, const std::string& name, double captured,
                                           double now, bool attributed, uint32_t line) {
  TraceBuilder b;
  Capture(b);
  b.Replay(4000, 1, kStream, kCudaGraph, 10, 100);
  Changed(b, 5000, kGraph, role, name, captured, now, attributed, line);
  b.Replay(5100, 1, kStream, kCudaGraph, 10, 100);
  return RunCheck(checks::NewHostValueFrozenCheck(), b.Build());
}

TEST(HostValueFrozenTest, ALearningRateAScheduleChangedIsReportedAtTheSchedulersStep) {
  const std::vector<Finding> findings =
      ChangedBetweenReplays("optimizer-hyperparameter", "Adam param_groups[0].lr", 0.01, 1e-6, true, 40);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].check_id, "host-value-frozen");
  EXPECT_EQ(findings[0].severity, Severity::kError);
  EXPECT_THAT(findings[0].message,
              HasSubstr("This call changed Adam param_groups[0].lr from 0.01 to 1e-06, but the graph (captured at "
                        "/home/me/train.py:12 in body) baked in 0.01"));
  EXPECT_EQ(FirstUserFrame(findings[0].where)->line, 40u);
  EXPECT_THAT(findings[0].evidence[0], HasSubstr("Adam param_groups[0].lr: 0.01 at capture, 1e-06 now"));
  EXPECT_THAT(findings[0].fix, HasSubstr("lr=torch.tensor(0.01, device=\"cuda\"), capturable=True"));
}

TEST(HostValueFrozenTest, AChangeSeenAtAReplayIsReportedThere) {
  TraceBuilder b;
  Capture(b);
  Changed(b, 5000, kGraph, "optimizer-hyperparameter", "SGD param_groups[0].lr", 0.1, 0.05, false, 44);
  Changed(b, 5000, kGraph, "optimizer-hyperparameter", "SGD param_groups[1].lr", 0.1, 0.05, false, 44);
  b.Replay(5100, 1, kStream, kCudaGraph, 10, 100);
  const std::vector<Finding> findings = RunCheck(checks::NewHostValueFrozenCheck(), b.Build());
  ASSERT_THAT(findings, SizeIs(1));  // one per graph: a scheduler changes every group at once
  EXPECT_THAT(findings[0].message, HasSubstr("SGD param_groups[0].lr is 0.05 at this replay"));
  EXPECT_THAT(findings[0].evidence, SizeIs(2));
}

TEST(HostValueFrozenTest, AChangeNoReplayFollowsIsNotReported) {
  TraceBuilder b;
  Capture(b);
  b.Replay(4000, 1, kStream, kCudaGraph, 10, 100);
  Changed(b, 5000, kGraph, "optimizer-hyperparameter", "Adam param_groups[0].lr", 0.01, 1e-6, true, 40);
  EXPECT_THAT(RunCheck(checks::NewHostValueFrozenCheck(), b.Build()), IsEmpty());
}

// A graphed callable's input that requires gradients where its sample did not (blind set 5,
// graphed-trunk-stem-unfrozen): sent from the call, at the program's requires_grad_(), under the module's id, which no
// capture has; the call's own replay follows it.
TEST(HostValueFrozenTest, AGraphedCallablesInputUnfrozenIsReportedAtTheRequiresGradCall) {
  constexpr uint64_t kModule = 0x7f00cc;
  TraceBuilder b;
  Changed(b, 5000, kModule, "requires-grad", "input 0 and the parameters it was computed from", 0, 1, true, 73).origin =
      ProbeOrigin::kGraphedCallables;
  const std::vector<Finding> findings = RunCheck(checks::NewHostValueFrozenCheck(), b.Build());
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].message, HasSubstr("This call makes input 0 and the parameters it was computed from require "
                                             "gradients"));
  EXPECT_EQ(FirstUserFrame(findings[0].where)->line, 73u);
}

TEST(HostValueFrozenTest, AModuleAttributeIsReportedUnlessShadowComparedTheModule) {
  constexpr uint64_t kModule = 0x7f00bb;
  TraceBuilder b;
  Changed(b, 5000, kModule, "module-attribute", "Scaled.scale", 1.0, 1.5, false, 31);
  const std::vector<Finding> findings = RunCheck(checks::NewHostValueFrozenCheck(), b.Build());
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].message, HasSubstr("reads Scaled.scale, which changed from 1 to 1.5 after capture"));
  EXPECT_THAT(findings[0].fix, HasSubstr("self.scale.fill_(value)"));

  trace::Trace shadowed = b.Build();
  trace::ShadowComparison& c = shadowed.shadow_comparisons.emplace_back();
  c.module = kModule;
  EXPECT_THAT(RunCheck(checks::NewHostValueFrozenCheck(), shadowed), IsEmpty());
}

TEST(HostValueFrozenTest, GradientsAndCleanTracesAreNotThisCheck) {
  TraceBuilder b;
  Capture(b);
  b.Replay(4000, 1, kStream, kCudaGraph, 10, 100);
  trace::ProbeEvent& grad = b.Probe(5000, 1, ProbeEventKind::kHostValueChanged, kGraph);
  grad.type = b.Intern("grad");
  grad.text = b.Intern("model.fc.weight");
  EXPECT_THAT(RunCheck(checks::NewHostValueFrozenCheck(), b.Build()), IsEmpty());
}

TEST(HostValueFrozenTest, AnAttributeOfAModuleInsideAManualCaptureIsReported) {
  TraceBuilder b;
  Capture(b);
  trace::ProbeEvent& e = b.Probe(5000, 1, ProbeEventKind::kHostValueChanged, kGraph, ProbeOrigin::kUser);
  e.type = b.Intern("module-attribute");
  e.text = b.Intern("model.temperature");
  e.value = Bits(1.0);
  e.value_now = Bits(0.5);
  e.stack = TrainPyStack(b, 70);
  b.Replay(5100, 1, kStream, kCudaGraph, 10, 100);
  const std::vector<Finding> findings = RunCheck(*checks::NewHostValueFrozenCheck(), b.Build());
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].message,
              HasSubstr("model.temperature is 0.5 at this replay, which the forward of a module that ran inside the "
                        "capture of the graph (captured at /home/me/train.py:12 in body) reads: the graph replays the "
                        "1 it was captured with"));
}

// Numbers the capture's Python read from anywhere (host_reads.py): a global stored at a line of the loop, and a dict
// entry seen only at the replay; the line they were read at comes as the text's second line.
TEST(HostValueFrozenTest, ANumberTheCapturedCodeReadIsReportedWhereverItLives) {
  TraceBuilder b;
  Capture(b);
  b.Replay(4000, 1, kStream, kCudaGraph, 10, 100);
  Changed(b, 5000, kGraph, "global", "TEMPERATURE\nstep() at /home/me/train.py:8", 1.0, 0.5, true, 52);
  Changed(b, 5000, kGraph, "entry", "CFG['mix']\nstep() at /home/me/train.py:9", 0.25, 0.5, false, 53);
  b.Replay(5100, 1, kStream, kCudaGraph, 10, 100);
  const std::vector<Finding> findings = RunCheck(checks::NewHostValueFrozenCheck(), b.Build());
  ASSERT_THAT(findings, SizeIs(2));
  const Finding& global = findings[0].message.find("global") != std::string::npos ? findings[0] : findings[1];
  const Finding& entry = &global == &findings[0] ? findings[1] : findings[0];
  EXPECT_THAT(global.message,
              HasSubstr("This line changes the global TEMPERATURE from 1 to 0.5, which the captured code read (in "
                        "step() at /home/me/train.py:8) when the graph (captured at /home/me/train.py:12 in body) was "
                        "captured: every replay still computes with 1."));
  EXPECT_EQ(FirstUserFrame(global.where)->line, 52u);
  EXPECT_EQ(global.where.key, "TEMPERATURE");
  EXPECT_THAT(global.evidence[0], HasSubstr("TEMPERATURE: 1 at capture, 0.5 now"));
  EXPECT_THAT(global.fix, HasSubstr("scale.fill_(value)"));
  EXPECT_THAT(entry.message, HasSubstr("At this replay CFG['mix'] is 0.5, not 0.25"));
  EXPECT_EQ(FirstUserFrame(entry.where)->line, 53u);
}

TEST(HostValueFrozenTest, GradModeTheCapturedCodeBranchedOnIsReportedAtTheReplay) {
  const std::vector<Finding> findings =
      ChangedBetweenReplays("grad-mode", "torch.is_grad_enabled()\nforward() at /home/me/train.py:20", 1, 0, false, 70);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].message,
              HasSubstr("This replay runs with grad mode off, but the captured code read torch.is_grad_enabled() (in "
                        "forward() at /home/me/train.py:20) when the graph (captured at /home/me/train.py:12 in body) "
                        "was captured with it on"));
  EXPECT_EQ(FirstUserFrame(findings[0].where)->line, 70u);
}

// A feature graph captured under torch.no_grad() replayed into fine-tuning (blind set 5, lpft-probe-graph-under-grad):
// the probe names the parameters the next optimizer step holds with no gradient, and no read of the grad mode.
TEST(HostValueFrozenTest, NoGradGraphReplayedToTrainNamesTheParametersLeftWithoutGradients) {
  const std::vector<Finding> findings =
      ChangedBetweenReplays("grad-mode", "backbone.0.weight, backbone.0.bias", 0, 1, false, 72);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].message,
              HasSubstr("This replay runs with grad mode on, and the next optimizer step holds backbone.0.weight, "
                        "backbone.0.bias with no gradient: the graph (captured at /home/me/train.py:12 in body) "
                        "computes without autograd"));
  EXPECT_THAT(findings[0].fix, HasSubstr("make_graphed_callables"));
  EXPECT_EQ(FirstUserFrame(findings[0].where)->line, 72u);
}

// bf16 capture replayed under fp16 autocast (blind set 3, autocast-dtype-switch): the states by name.
TEST(HostValueFrozenTest, AutocastInAnotherDtypeIsReportedWithBothDtypes) {
  const std::vector<Finding> findings =
      ChangedBetweenReplays("autocast", "torch.is_autocast_enabled('cuda')", 3, 2, false, 71);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].message, HasSubstr("This replay runs with CUDA autocast on in float16, where earlier replays "
                                             "ran with it on in bfloat16 as at the capture"));
  EXPECT_EQ(FirstUserFrame(findings[0].where)->line, 71u);
}

TEST(HostValueFrozenTest, AParameterUnfrozenAfterCaptureIsReportedAtTheCall) {
  TraceBuilder b;
  Capture(b);
  b.Replay(4000, 1, kStream, kCudaGraph, 10, 100);
  Changed(b, 5000, kGraph, "requires-grad", "model.0.weight", 0, 1, true, 61);
  Changed(b, 5000, kGraph, "requires-grad", "model.0.bias", 0, 1, true, 61);
  b.Replay(5100, 1, kStream, kCudaGraph, 10, 100);
  const std::vector<Finding> findings = RunCheck(checks::NewHostValueFrozenCheck(), b.Build());
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].message,
              HasSubstr("This call makes model.0.weight and 1 more parameter require gradients: the graph (captured "
                        "at /home/me/train.py:12 in body) was captured when they did not, so its replays compute no "
                        "gradient for them"));
  EXPECT_EQ(FirstUserFrame(findings[0].where)->line, 61u);
  EXPECT_THAT(findings[0].fix, HasSubstr("Capture the graph again"));
}

TEST(HostValueFrozenTest, AParamGroupAddedAfterCaptureIsReportedAtTheCall) {
  const std::vector<Finding> findings =
      ChangedBetweenReplays("optimizer-param-groups", "SGD param_groups", 1, 2, true, 47);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].message,
              HasSubstr("This call gave the optimizer 2 param groups (SGD param_groups), but the graph (captured at "
                        "/home/me/train.py:12 in body) was captured stepping 1 of them"));
  EXPECT_EQ(FirstUserFrame(findings[0].where)->line, 47u);
  EXPECT_THAT(findings[0].fix, HasSubstr("Capture the step again after add_param_group"));
}

}  // namespace
}  // namespace graphcheck::testing_trace
