// replay-mismatch: replays of the program's own capture compared under --shadow with the captured call run eagerly.
// A replay whose parameters differ beyond the rule is one finding per graph, naming the worst tensor, at the replay's
// line; nondeterministic noise within eager's own spread, a graph whose baked-in host values changed (host-value-frozen
// names that), host draws (rng-frozen-mask) and module forwards (numerics-forward) are not; a replay the probe could
// not compare is a note with the reason.
#include "checks/checks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/checks/engine/shadow_test_util.h"

namespace graphcheck::checks {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;
using testing_util::ShadowTrace;

constexpr uint64_t kGraph = 0x7f00aa;

TEST(ReplayMismatchTest, AReplayThatStepsOtherwiseThanItsCodeIsAFinding) {
  ShadowTrace t;
  t.Region();
  for (uint32_t replay = 1; replay <= 3; ++replay) {
    t.Compare(kGraph, replay, 0, 0, false, "output static_loss");
    t.Compare(kGraph, replay, 0, 0, false, "gradient model.fc.weight");
    t.Compare(kGraph, replay, replay == 1 ? 0 : 0.3, 0, false, "parameter model.fc.weight");
    t.Compare(kGraph, replay, replay == 1 ? 0 : 0.02, 0, false, "state Adam exp_avg of model.fc.weight");
  }
  const std::vector<Finding> findings = t.Run(*NewReplayMismatchCheck());
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].check_id, "replay-mismatch");
  EXPECT_EQ(findings[0].severity, Severity::kError);
  EXPECT_THAT(findings[0].message, HasSubstr("Replay 2 of the graph differs from train_step run eagerly from the same "
                                             "state: 2 of 4 tensors beyond the numerics rule, the worst parameter "
                                             "model.fc.weight (replays that differ: 2 of 3 compared)."));
  EXPECT_THAT(findings[0].evidence[1], HasSubstr("allowed difference"));
  EXPECT_THAT(findings[0].evidence[2], HasSubstr("parameter model.fc.weight (float32, 4096 elements)"));
  EXPECT_EQ(FirstUserFrame(findings[0].where)->line, 42);
}

TEST(ReplayMismatchTest, NoiseWithinEagersOwnSpreadIsNotAFinding) {
  // A gradient whose two eager runs differ by 1e-3 (atomics): the replay's 3e-3 is within 4x that spread, and the
  // pooled spread of its role covers the parameter whose repeat agreed by chance.
  ShadowTrace t;
  t.Region().Compare(kGraph, 1, 3e-3, 1e-3, false, "gradient model.bn.bias");
  t.Compare(kGraph, 1, 2e-3, 0, false, "gradient model.fc.bias");
  EXPECT_THAT(t.Run(*NewReplayMismatchCheck()), IsEmpty());
}

TEST(ReplayMismatchTest, OtherChecksNameTheCause) {
  ShadowTrace host;
  host.Region().Compare(kGraph, 1, 0.5, 0, false, "parameter w");
  trace::ProbeEvent& changed = host.trace().probe_events.emplace_back();
  changed.kind = trace::ProbeEventKind::kHostValueChanged;
  changed.graph = kGraph;
  changed.type = host.trace().Intern("optimizer-hyperparameter");
  EXPECT_THAT(host.Run(*NewReplayMismatchCheck()), IsEmpty());
  ShadowTrace drawn;
  drawn.Region().Compare(kGraph, 1, 0.5, 0, false, "output loss").Draws("cpu");
  EXPECT_THAT(drawn.Run(*NewReplayMismatchCheck()), IsEmpty());
  ShadowTrace module;
  module.Compare(7, 1, 0.5);
  EXPECT_THAT(module.Run(*NewReplayMismatchCheck()), IsEmpty());
}

TEST(ReplayMismatchTest, AReplayNotComparedIsANoteWithTheReason) {
  ShadowTrace t;
  trace::ProbeEvent& skipped = t.trace().probe_events.emplace_back();
  skipped.kind = trace::ProbeEventKind::kShadowSkipped;
  skipped.graph = kGraph;
  skipped.type = t.trace().Intern("the captured region");
  skipped.text = t.trace().Intern("its body is 3 statements, not one call");
  const std::vector<Finding> findings = t.Run(*NewReplayMismatchCheck());
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].severity, Severity::kNote);
  EXPECT_THAT(findings[0].message,
              HasSubstr("--shadow did not compare the replays of the graph: its body is 3 statements, not one call."));
  EXPECT_FALSE(NewReplayMismatchCheck()->CanRun(CheckInputs{}));
}

}  // namespace
}  // namespace graphcheck::checks
