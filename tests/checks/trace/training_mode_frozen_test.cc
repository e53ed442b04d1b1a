// training-mode-frozen: a replay in another training mode than the capture is reported at the replay, Megatron's
// layer graphs by name; no event, no finding.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "checks/checks.h"
#include "tests/checks/trace/contract_test_util.h"

namespace graphcheck::testing_trace {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

TEST(TrainingModeFrozenTest, AReplayInEvalOfATrainingCaptureIsReported) {
  TraceBuilder b;
  Capture(b);
  trace::ProbeEvent& e = b.Probe(5000, 1, ProbeEventKind::kTrainingModeChanged, kGraph, ProbeOrigin::kUser);
  e.value = 1;
  e.value_now = 2;
  e.text = b.Intern("model.drop, model.norm");
  e.stack = TrainPyStack(b, 61);
  b.Replay(5100, 1, kStream, kCudaGraph, 10, 100);
  const std::vector<Finding> findings = Findings(checks::NewTrainingModeFrozenCheck(), b);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].message, HasSubstr("runs with 2 modules in eval mode that the capture recorded in training"));
  EXPECT_THAT(findings[0].evidence[0], HasSubstr("model.drop, model.norm"));
  EXPECT_EQ(FirstUserFrame(findings[0].where)->line, 61u);
}

TEST(TrainingModeFrozenTest, MegatronsLayerGraphIsNamed) {
  TraceBuilder b;
  trace::ProbeEvent& begin = b.Probe(900, 1, ProbeEventKind::kCaptureBegin, kGraph, ProbeOrigin::kMegatron);
  begin.value = 2;
  begin.text = b.Intern("forward");
  trace::ProbeEvent& e = b.Probe(5000, 1, ProbeEventKind::kTrainingModeChanged, kGraph, ProbeOrigin::kMegatron);
  e.value = 1;
  e.value_now = 1;
  e.text = b.Intern("module.decoder.layers.1.self_attention.core_attention.attention_dropout");
  const std::vector<Finding> findings = Findings(checks::NewTrainingModeFrozenCheck(), b);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].message, HasSubstr("This replay of Megatron's layer 2 forward graph"));
  EXPECT_THAT(findings[0].fix, HasSubstr("PR #6992"));
}

TEST(TrainingModeFrozenTest, NoEventNoFinding) {
  TraceBuilder b;
  Capture(b);
  b.Replay(5100, 1, kStream, kCudaGraph, 10, 100);
  EXPECT_THAT(Findings(checks::NewTrainingModeFrozenCheck(), b), IsEmpty());
}

}  // namespace
}  // namespace graphcheck::testing_trace
