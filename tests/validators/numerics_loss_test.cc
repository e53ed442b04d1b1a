#include "validators/engine/numerics_loss.h"

#include <cmath>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/engine_run.h"

namespace graphcheck {
namespace {

using ::testing::HasSubstr;

std::vector<Finding> RunOn(const EngineRun& run, const CheckOptions& options = {}) {
  NumericsLossCheck check;
  CheckInputs inputs;
  inputs.engine = &run;
  std::vector<Finding> findings;
  check.Run(inputs, BoundOptions(check.info(), options), &findings);
  return findings;
}

EngineRun Losses(std::vector<double> eager, std::vector<double> graphed, std::string dtype = "float32") {
  EngineRun run;
  run.model = "builtin:mlp";
  run.scope = "callables";
  run.compute_dtype = std::move(dtype);
  run.eager_losses = std::move(eager);
  run.graphed_losses = std::move(graphed);
  return run;
}

TEST(NumericsLossTest, FlagsDivergingGraphedLosses) {
  // A host value frozen at capture: the graphed run drifts away from step 2 on.
  const auto findings = RunOn(Losses({1.0, 0.9, 0.8, 0.7}, {1.0, 0.9, 0.85, 0.9}));
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].check_id, "numerics-loss");
  EXPECT_EQ(findings[0].severity, Severity::kError);
  EXPECT_THAT(findings[0].message, HasSubstr("2 of 4"));
  EXPECT_THAT(findings[0].message, HasSubstr("first at step 2"));
  EXPECT_THAT(findings[0].message, HasSubstr("worst at step 3"));
  EXPECT_FALSE(findings[0].fix.empty());
}

TEST(NumericsLossTest, FlagsNonFiniteGraphedLoss) {
  const auto findings = RunOn(Losses({1.0, 0.9}, {1.0, std::nan("")}));
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_THAT(findings[0].message, HasSubstr("not finite"));
}

TEST(NumericsLossTest, CleanWithinTolerance) {
  EXPECT_TRUE(RunOn(Losses({1.0, 0.9, 0.8}, {1.0, 0.9000001, 0.8000002})).empty());
  // bf16 autocast gets a wider tolerance: 3% off is fine there, not in float32.
  EXPECT_TRUE(RunOn(Losses({1.0, 0.9}, {1.0, 0.93}, "bfloat16")).empty());
  EXPECT_EQ(RunOn(Losses({1.0, 0.9}, {1.0, 0.93}, "float32")).size(), 1u);
}

TEST(NumericsLossTest, IgnoresStepsWhereEagerDivergedOrGraphedDidNotRun) {
  EXPECT_TRUE(RunOn(Losses({1.0, INFINITY}, {1.0, 5.0})).empty());
  EXPECT_TRUE(RunOn(Losses({1.0, 0.9}, {})).empty());
}

TEST(NumericsLossTest, ToleranceIsAnOption) {
  CheckOptions options;
  options.Set("numerics-loss", "rtol-float32", "0.1");
  EXPECT_TRUE(RunOn(Losses({1.0, 0.9}, {1.0, 0.97}), options).empty());
}

}  // namespace
}  // namespace graphcheck
