// rng-frozen-mask on constructed RngDraws: replays that repeat their capture-time draws are flagged; replays that draw
// anew, and a model without randomness, are not. In a running program (--shadow comparisons): a graphed call or replay
// that differs from its eager code where that code drew on the host is flagged at the call; one that agrees, or
// whose code drew only from the CUDA generator, is not.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "checks/checks.h"
#include "tests/checks/engine/rng_test_util.h"
#include "tests/checks/engine/shadow_test_util.h"

namespace graphcheck::checks {
namespace {

using ::testing::HasSubstr;
using testing_util::kDrawsOnlyInEager;
using testing_util::kDropoutAsEager;
using testing_util::kHostShiftFrozen;
using testing_util::RunEngineCheck;
using testing_util::ShadowTrace;
using testing_util::WithDraws;

TEST(RngFrozenMaskTest, FlagsReplaysThatRepeatTheirDraws) {
  const std::vector<Finding> findings = RunEngineCheck(*NewRngFrozenMaskCheck(), WithDraws(kHostShiftFrozen));
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].check_id, "rng-frozen-mask");
  EXPECT_EQ(findings[0].severity, Severity::kError);
  EXPECT_THAT(findings[0].message, HasSubstr("two eager calls on the same input differ by up to 2.5"));
  EXPECT_THAT(findings[0].fix, HasSubstr("on the GPU"));
}

TEST(RngFrozenMaskTest, LeavesDrawsThatAdvanceAlone) {
  EXPECT_THAT(RunEngineCheck(*NewRngFrozenMaskCheck(), WithDraws(kDropoutAsEager)), ::testing::IsEmpty());
  EXPECT_THAT(RunEngineCheck(*NewRngFrozenMaskCheck(), WithDraws(kDrawsOnlyInEager)), ::testing::IsEmpty());
  EXPECT_THAT(RunEngineCheck(*NewRngFrozenMaskCheck(), WithDraws({0, 0, 0, 0, 3, 0, 0})), ::testing::IsEmpty());
}

TEST(RngFrozenMaskTest, ShadowFlagsAHostDrawTheCaptureFroze) {
  // float(torch.rand(1)) in a graphed forward: the eager runs (CPU generator put back each time) agree with each other
  // and differ from every graphed call, which replays the draw made at capture.
  const std::vector<Finding> findings =
      ShadowTrace().Compare(7, 1, 0.3).Draws("cpu").Compare(7, 2, 0.2).Draws("cpu").Run(*NewRngFrozenMaskCheck());
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_THAT(findings[0].message, HasSubstr("The forward of Block (make_graphed_callables) draws random numbers on "
                                             "the host (cpu), which a capture records once"));
  EXPECT_THAT(findings[0].message, HasSubstr("(2 of 2 compared differ)"));
  EXPECT_EQ(FirstUserFrame(findings[0].where)->line, 42);
  EXPECT_THAT(findings[0].fix, HasSubstr("device=\"cuda\""));
  const std::vector<Finding> region = ShadowTrace()
                                          .Region()
                                          .Compare(9, 1, 0.3, 0, false, "output loss")
                                          .Draws("python-random")
                                          .Run(*NewRngFrozenMaskCheck());
  ASSERT_EQ(region.size(), 1u);
  EXPECT_THAT(region[0].message, HasSubstr("train_step, captured, draws random numbers on the host (python-random)"));
}

TEST(RngFrozenMaskTest, ShadowLeavesCudaDrawsAndAgreeingHostDrawsAlone) {
  EXPECT_THAT(ShadowTrace().Compare(7, 1, 0.3).Draws("cuda").Run(*NewRngFrozenMaskCheck()), ::testing::IsEmpty());
  EXPECT_THAT(ShadowTrace().Compare(7, 1, 0).Draws("cpu").Run(*NewRngFrozenMaskCheck()), ::testing::IsEmpty());
}

// The probe saw the draw inside a capture: rng-host-draw names it at the drawing line, and this check says nothing
// more. A draw from another source, or in another graph than the compared region's, does not explain it.
TEST(RngFrozenMaskTest, ShadowLeavesADrawTheProbeSawInTheCaptureToRngHostDraw) {
  auto with_draw = [](ShadowTrace shadow, uint64_t graph, const char* source) {
    trace::ProbeEvent& event = shadow.trace().probe_events.emplace_back();
    event.kind = trace::ProbeEventKind::kHostRandomDraw;
    event.graph = graph;
    event.type = shadow.trace().Intern(source);
    event.text = shadow.trace().Intern("torch.rand");
    return shadow.Run(*NewRngFrozenMaskCheck());
  };
  ShadowTrace module;
  module.Compare(7, 1, 0.3).Draws("cpu");
  EXPECT_THAT(with_draw(module, 1234, "torch-cpu"), ::testing::IsEmpty());
  EXPECT_EQ(with_draw(module, 1234, "numpy").size(), 1u);
  ShadowTrace region;
  region.Region().Compare(9, 1, 0.3, 0, false, "output loss").Draws("python-random");
  EXPECT_THAT(with_draw(region, 9, "python-random"), ::testing::IsEmpty());
  EXPECT_EQ(with_draw(region, 10, "python-random").size(), 1u);
}

}  // namespace
}  // namespace graphcheck::checks
