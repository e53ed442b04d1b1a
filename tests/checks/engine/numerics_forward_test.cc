// numerics-forward: first-step outputs that differ from eager are flagged, worst first; outputs within the rule, or
// differing only as much as eager differs from itself, are not; a repeat that differs at the first step is not noise.
// The same rule over `graphcheck run --shadow`'s comparisons in a trace: one finding per graphed module, at the
// program's line; calls whose eager forward drew on the host are left to rng-frozen-mask, and calls a trace before 1.8
// marked random are not judged.
#include "checks/checks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/checks/engine/numerics_test_util.h"
#include "tests/checks/engine/shadow_test_util.h"
#include "trace/events.h"

namespace graphcheck::checks {
namespace {

using ::testing::HasSubstr;
using testing_util::Losses;
using testing_util::Sample;

std::vector<Finding> Check(const EngineRun& run, const CheckOptions& options = {}) {
  return testing_util::RunEngineCheck(*NewNumericsForwardCheck(), run, options);
}

TEST(NumericsForwardTest, FlagsOutputsThatDiffer) {
  EngineRun run = Losses({1.0}, {1.0}, {1.0});
  run.samples = {Sample("output 0", TensorRole::kOutput, 1e-3), Sample("output 1", TensorRole::kOutput, 0.5),
                 Sample("output 2", TensorRole::kOutput, 0)};
  const auto findings = Check(run);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].check_id, "numerics-forward");
  EXPECT_THAT(findings[0].message, HasSubstr("2 of 3 forward outputs"));
  EXPECT_THAT(findings[0].message, HasSubstr("the worst is output 1"));
  EXPECT_EQ(findings[0].where.key, "output 1");
  EXPECT_THAT(findings[0].evidence[1], HasSubstr("bitwise"));
  EXPECT_THAT(findings[0].evidence[2], HasSubstr("output output 1 (float32, 1024 elements): worst at [7]"));
}

TEST(NumericsForwardTest, CleanWhenOutputsAgree) {
  EngineRun run = Losses({1.0}, {1.0}, {1.0});
  run.samples = {Sample("output 0", TensorRole::kOutput, 0), Sample("fc.weight", TensorRole::kGradient, 0.5)};
  EXPECT_TRUE(Check(run).empty());  // a gradient is numerics-grad's
}

TEST(NumericsForwardTest, EagerNoiseIsNotAFinding) {
  // Non-deterministic kernels: eager's repeat differs by 2e-5, graphed by 3e-4 (within 1e-4 + 4x the spread).
  EngineRun run = Losses({1.0}, {1.0}, {1.0});
  run.samples = {Sample("output 0", TensorRole::kOutput, 1.5e-4, /*spread=*/2e-5)};
  EXPECT_TRUE(Check(run).empty());
  run.samples = {Sample("output 0", TensorRole::kOutput, 5e-2, /*spread=*/2e-5)};
  EXPECT_EQ(Check(run).size(), 1u);
}

TEST(NumericsForwardTest, APerCallHostValueIsNotNoise) {
  // A forward that scales by a per-call Python counter: the eager repeat, from the same state, already differs by
  // 20% (its counter went on). That spread is the defect's, not eager's noise: graphed's 45% is flagged.
  EngineRun run = Losses({1.0}, {1.0}, {1.0});
  run.samples = {Sample("output 0", TensorRole::kOutput, 0.45, /*spread=*/0.2)};
  const auto findings = Check(run);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_THAT(findings[0].evidence[1], HasSubstr("keeps per-call state outside its parameters and buffers"));
}

TEST(NumericsForwardTest, BitwiseCanBeTurnedOff) {
  EngineRun run = Losses({1.0}, {1.0}, {1.0});
  run.samples = {Sample("output 0", TensorRole::kOutput, 1e-7)};
  EXPECT_EQ(Check(run).size(), 1u);
  CheckOptions options;
  options.Set("numerics-forward", "bitwise", "false");
  EXPECT_TRUE(Check(run, options).empty());
}

using testing_util::ShadowTrace;

TEST(NumericsForwardTest, ShadowFlagsAGraphedModuleThatDiffersFromItsEagerForward) {
  // A frozen Python scale: calls 2 and 3 differ by 0.5 and 1.0 (tf32 allows 1e-6 + 1e-3 x 2), call 1 agrees.
  const auto findings =
      ShadowTrace().Compare(7, 1, 0).Compare(7, 2, 0.5).Compare(7, 3, 1.0).Run(*NewNumericsForwardCheck());
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].check_id, "numerics-forward");
  EXPECT_THAT(findings[0].message, HasSubstr("The graphed forward of Block (make_graphed_callables) differs from its "
                                             "own eager forward on 2 of 3 compared calls; the worst is call 3."));
  EXPECT_THAT(findings[0].evidence[0], HasSubstr("graphcheck run --shadow"));
  EXPECT_THAT(findings[0].evidence[1], HasSubstr("(tf32)"));
  EXPECT_THAT(findings[0].evidence[2], HasSubstr("output output 0 (float32, 4096 elements): worst at [9], eager 2, "
                                                 "graphed 3"));
  EXPECT_EQ(findings[0].where.key, "Block");
  const SourceFrame* line = FirstUserFrame(findings[0].where);
  ASSERT_NE(line, nullptr);
  EXPECT_EQ(line->file, "/home/me/train.py");
  EXPECT_EQ(line->line, 42);
}

TEST(NumericsForwardTest, ShadowLeavesAgreeingAndRandomCallsAlone) {
  // Within tf32's tolerance; within 4x eager's own spread; a dropout call that drew other masks.
  EXPECT_TRUE(ShadowTrace().Compare(7, 1, 1e-3).Run(*NewNumericsForwardCheck()).empty());
  EXPECT_TRUE(ShadowTrace().Compare(7, 1, 8e-3, /*spread=*/2e-3).Run(*NewNumericsForwardCheck()).empty());
  EXPECT_TRUE(ShadowTrace().Compare(7, 1, 0.7, 0, /*random=*/true).Run(*NewNumericsForwardCheck()).empty());
  // A forward that drew on the host differs from its frozen draw: rng-frozen-mask's, not this check's.
  EXPECT_TRUE(ShadowTrace().Compare(7, 1, 0.7).Draws("cpu").Run(*NewNumericsForwardCheck()).empty());
  // A draw from the CUDA generator, put back before each eager run, is compared.
  EXPECT_EQ(ShadowTrace().Compare(7, 1, 0.7).Draws("cuda").Run(*NewNumericsForwardCheck()).size(), 1u);
  // No comparisons: the check has nothing to read and does not run.
  EXPECT_FALSE(NewNumericsForwardCheck()->CanRun(CheckInputs{}));
}

TEST(NumericsForwardTest, ShadowSpreadOfAPerCallHostValueIsNotNoise) {
  // The two eager forwards already differ by 0.4 on the same input and state (a per-call counter): graphed's 0.6 is
  // judged against atol + rtol alone.
  const auto findings = ShadowTrace().Compare(7, 1, 0.6, /*spread=*/0.4).Run(*NewNumericsForwardCheck());
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_THAT(findings[0].evidence[1], HasSubstr("keeps per-call state outside its parameters and buffers"));
}

TEST(NumericsForwardTest, ShadowReportsEachModuleOnce) {
  const auto findings =
      ShadowTrace().Compare(7, 1, 0.5).Compare(8, 1, 0.5).Compare(8, 2, 0.5).Run(*NewNumericsForwardCheck());
  ASSERT_EQ(findings.size(), 2u);
  EXPECT_THAT(findings[1].message, HasSubstr("on 2 of 2 compared calls"));
}

// A make_graphed_callables capture replaced a buffer (`self.steps = self.steps + 1` in forward): state-made-in-capture
// names the line, and the graphed forward's difference it causes is not a second finding. Optimizer state made in a
// capture, or a buffer replaced in the program's own capture, explains nothing about a graphed forward.
TEST(NumericsForwardTest, ShadowLeavesABufferReplacedInTheCaptureToStateMadeInCapture) {
  auto with_replaced = [](trace::ProbeOrigin origin, const char* role) {
    testing_util::ShadowTrace shadow;
    shadow.Compare(7, 1, 0.5);
    trace::ProbeEvent& event = shadow.trace().probe_events.emplace_back();
    event.kind = trace::ProbeEventKind::kStateMadeInCapture;
    event.origin = origin;
    event.graph = 1234;
    event.type = shadow.trace().Intern(role);
    event.text = shadow.trace().Intern("model.steps");
    return shadow.Run(*NewNumericsForwardCheck());
  };
  EXPECT_TRUE(with_replaced(trace::ProbeOrigin::kGraphedCallables, "buffer").empty());
  EXPECT_EQ(with_replaced(trace::ProbeOrigin::kGraphedCallables, "optimizer-state").size(), 1u);
  EXPECT_EQ(with_replaced(trace::ProbeOrigin::kUser, "buffer").size(), 1u);
}

}  // namespace
}  // namespace graphcheck::checks
