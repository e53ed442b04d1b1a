// numerics-grad: gradients that differ while the outputs agree are flagged; where the outputs differ too,
// numerics-forward names the cause and this check is silent. Under --shadow: a graphed module's backward whose
// gradients differ from its eager backward's, and a .grad that is not what the backward accumulated.
#include "checks/checks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/checks/engine/numerics_test_util.h"
#include "tests/checks/engine/shadow_test_util.h"

namespace graphcheck::checks {
namespace {

using ::testing::HasSubstr;
using testing_util::Losses;
using testing_util::Sample;
using testing_util::ShadowTrace;
using trace::ShadowSubject;

std::vector<Finding> Check(const EngineRun& run) { return testing_util::RunEngineCheck(*NewNumericsGradCheck(), run); }

TEST(NumericsGradTest, FlagsGradientsThatDiffer) {
  EngineRun run = Losses({1.0}, {1.0}, {1.0});
  run.samples = {Sample("output 0", TensorRole::kOutput, 0), Sample("0.weight", TensorRole::kGradient, 0.25),
                 Sample("0.bias", TensorRole::kGradient, 0)};
  const auto findings = Check(run);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].check_id, "numerics-grad");
  EXPECT_THAT(findings[0].message, HasSubstr("1 of 2 parameter gradients"));
  EXPECT_EQ(findings[0].where.key, "0.weight");
}

TEST(NumericsGradTest, CleanWhenGradientsAgree) {
  EngineRun run = Losses({1.0}, {1.0}, {1.0});
  run.samples = {Sample("output 0", TensorRole::kOutput, 0), Sample("0.weight", TensorRole::kGradient, 0)};
  EXPECT_TRUE(Check(run).empty());
}

TEST(NumericsGradTest, SilentWhenTheForwardAlreadyDiffers) {
  EngineRun run = Losses({1.0}, {1.0}, {1.0});
  run.samples = {Sample("output 0", TensorRole::kOutput, 0.1), Sample("0.weight", TensorRole::kGradient, 0.25)};
  EXPECT_TRUE(Check(run).empty());
}

TEST(NumericsGradTest, ShadowFlagsABackwardGraphThatDiffersFromEager) {
  // Module 7's gradients agree on call 1 and differ on calls 2 and 3 (a host value its backward read at capture).
  const auto findings = ShadowTrace()
                            .Subject(ShadowSubject::kModuleBackward)
                            .Compare(7, 1, 0, 0, false, "gradient 0.weight")
                            .Compare(7, 2, 0.5, 0, false, "gradient 0.weight")
                            .Compare(7, 3, 1.0, 0, false, "gradient 0.weight")
                            .Run(*NewNumericsGradCheck());
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].check_id, "numerics-grad");
  EXPECT_THAT(findings[0].message, HasSubstr("computes other parameter gradients than its own eager backward on 2 "
                                             "of 3 compared calls; the worst is call 3 (gradient 0.weight)"));
  EXPECT_EQ(findings[0].where.key, "Block");
  ASSERT_FALSE(findings[0].where.python.empty());
  EXPECT_EQ(findings[0].where.python.back().line, 42);
}

TEST(NumericsGradTest, ShadowFlagsAGradThatIsNotWhatTheBackwardAccumulated) {
  // Accumulation is exact: any difference counts, however small.
  const auto findings = ShadowTrace()
                            .Subject(ShadowSubject::kGradAccumulation)
                            .Compare(7, 1, 0, 0, false, "gradient 0.weight")
                            .Compare(7, 2, 1e-7, 0, false, "gradient 0.weight")
                            .Compare(7, 2, 0, 0, false, "gradient 0.bias")
                            .Run(*NewNumericsGradCheck());
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_THAT(findings[0].message,
              HasSubstr(".grad is not what the backward accumulated on 1 of 2 compared calls: "
                        "on call 2, .grad differs from .grad before plus the gradient added for 1 of 2 "
                        "parameters"));
  EXPECT_THAT(findings[0].evidence, testing::Contains(HasSubstr("bit for bit")));
  EXPECT_THAT(findings[0].fix, HasSubstr("torch.zeros_like(p)"));
}

TEST(NumericsGradTest, ShadowLeavesAgreeingBackwardsAndCausesNamedElsewhereAlone) {
  ShadowTrace agreeing;
  agreeing.Subject(ShadowSubject::kModuleBackward)
      .Compare(7, 1, 1e-3, 0, false, "gradient 0.weight")
      .Subject(ShadowSubject::kGradAccumulation)
      .Compare(7, 1, 0, 0, false, "gradient 0.weight");
  EXPECT_TRUE(agreeing.Run(*NewNumericsGradCheck()).empty());
  // Gradients not comparable (the forward drew random numbers the eager run could not draw alike).
  EXPECT_TRUE(ShadowTrace()
                  .Subject(ShadowSubject::kModuleBackward)
                  .Compare(7, 1, 0.7, 0, /*random=*/true, "gradient 0.weight")
                  .Run(*NewNumericsGradCheck())
                  .empty());
  // The forward differs already: numerics-forward names it.
  EXPECT_TRUE(ShadowTrace()
                  .Compare(7, 1, 0.5)
                  .Subject(ShadowSubject::kModuleBackward)
                  .Compare(7, 1, 0.5, 0, false, "gradient 0.weight")
                  .Run(*NewNumericsGradCheck())
                  .empty());
  // The probe saw .grad in the module's graph pool: grad-aliases-graph names it.
  ShadowTrace aliased;
  aliased.Subject(ShadowSubject::kGradAccumulation).Compare(7, 2, 0.5, 0, false, "gradient 0.weight");
  trace::ProbeEvent& event = aliased.trace().probe_events.emplace_back();
  event.kind = trace::ProbeEventKind::kGradAliased;
  event.graph = 7;
  EXPECT_TRUE(aliased.Run(*NewNumericsGradCheck()).empty());
  // Another module's aliasing does not hide this one's.
  event.graph = 8;
  EXPECT_EQ(aliased.Run(*NewNumericsGradCheck()).size(), 1u);
}

}  // namespace
}  // namespace graphcheck::checks
