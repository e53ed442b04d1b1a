// The numerics rule on its own: when eager counts as reproducible, what each mode allows, when the eager spread is
// noise, the ranking of mismatches and the evidence table.
#include "checks/engine/numerics_rule.h"

#include <cmath>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/checks/engine/numerics_test_util.h"

namespace graphcheck::checks {
namespace {

using ::testing::HasSubstr;
using testing_util::Losses;
using testing_util::Sample;

// Any check carrying the rule's options binds them; numerics-forward's id is used for the option values.
CheckInfo RuleInfo() {
  CheckInfo info;
  info.id = "numerics-forward";
  info.options = NumericsRuleOptions();
  return info;
}

NumericsRule Rule(const EngineRun& run, const CheckOptions& options = {}) {
  static const CheckInfo kInfo = RuleInfo();
  return NumericsRule(run, BoundOptions(kInfo, options));
}

TEST(NumericsRuleTest, EagerIsReproducibleOnlyWithDeterministicSettingsAndABitwiseRepeat) {
  EXPECT_TRUE(EagerReproducible(Losses({1.0, NAN}, {1.0, 2.0}, {1.0, NAN})));  // NaN at the same step counts
  EXPECT_FALSE(EagerReproducible(Losses({1.0, 0.9}, {1.0, 0.9})));             // no repeat ran
  EXPECT_FALSE(EagerReproducible(Losses({1.0, 0.9}, {1.0, 0.9}, {1.0})));      // a shorter repeat
  EXPECT_FALSE(EagerReproducible(Losses({1.0, 0.9}, {1.0, 0.9}, {1.0, 0.90000001})));
  EngineRun native = Losses({1.0}, {1.0}, {1.0});
  native.deterministic_settings = false;
  EXPECT_FALSE(EagerReproducible(native));
  EngineRun spread = Losses({1.0}, {1.0}, {1.0});
  spread.samples = {Sample("w", TensorRole::kParameter, 0, /*spread=*/1e-9)};
  EXPECT_FALSE(EagerReproducible(spread));
}

TEST(NumericsRuleTest, BitwiseAllowsNothingAndCanBeTurnedOff) {
  const EngineRun run = Losses({1.0}, {1.0}, {1.0});
  EXPECT_TRUE(Rule(run).bitwise());
  EXPECT_EQ(Rule(run).Allowed(100, 0), 0);
  EXPECT_THAT(Rule(run).Describe(), HasSubstr("bitwise"));
  CheckOptions options;
  options.Set("numerics-forward", "bitwise", "false");
  EXPECT_FALSE(Rule(run, options).bitwise());
  EXPECT_DOUBLE_EQ(Rule(run, options).Allowed(100, 0), 1e-6 + 1e-4 * 100);
}

TEST(NumericsRuleTest, ToleranceByPrecisionPlusTheSpreadWhenItIsNoise) {
  // Non-deterministic: the repeat's first step agrees within the floor, so the spread is noise.
  const EngineRun run = Losses({1.0, 0.9}, {1.0, 0.9}, {1.00000001, 0.95});
  EXPECT_FALSE(Rule(run).bitwise());
  EXPECT_DOUBLE_EQ(Rule(run).Allowed(2, 0.01), 1e-6 + 1e-4 * 2 + 4 * 0.01);
  EXPECT_DOUBLE_EQ(Rule(run).Allowed(2, -1), 1e-6 + 1e-4 * 2);  // no spread measured
  EngineRun bf16 = run;
  bf16.compute_dtype = "bfloat16";
  EXPECT_DOUBLE_EQ(Rule(bf16).Allowed(2, 0), 1e-6 + 1e-2 * 2);
  EngineRun tf32 = run;
  tf32.deterministic_settings = false;
  EXPECT_DOUBLE_EQ(Rule(tf32).Allowed(2, 0), 1e-6 + 1e-3 * 2);
  EXPECT_THAT(Rule(tf32).Describe(), HasSubstr("(tf32)"));
}

TEST(NumericsRuleTest, ASpreadAtTheFirstStepIsNotNoise) {
  const EngineRun run = Losses({1.0, 0.9}, {1.0, 0.9}, {1.2, 0.95});
  EXPECT_DOUBLE_EQ(Rule(run).Allowed(2, 0.5), 1e-6 + 1e-4 * 2);
  EXPECT_THAT(Rule(run).Describe(), HasSubstr("from the same state and input"));
}

// Nondeterministic kernels touch many tensors; one repeat reproduces some by chance. A tensor whose repeat agreed is
// allowed the largest relative spread its role showed: here gradient b's 1e-3 of its scale, so a's 2e-3 x 10 is
// noise (4 x 1e-3 x 10 allowed) while outputs, whose repeat agreed everywhere, keep the plain tolerance.
TEST(NumericsRuleTest, ATensorIsAllowedTheSpreadItsRoleShowed) {
  EngineRun run = Losses({1.0, 0.9}, {1.0, 0.9}, {1.0, 0.95});
  run.deterministic_settings = false;
  run.samples = {Sample("a", TensorRole::kGradient, 0.02, 0, 10), Sample("b", TensorRole::kGradient, 0, 0.002, 2),
                 Sample("out", TensorRole::kOutput, 0.05, 0, 10)};
  const NumericsRule rule = Rule(run);
  EXPECT_DOUBLE_EQ(rule.AllowedFor(run.samples[0]), 1e-6 + 1e-3 * 10 + 4 * 1e-3 * 10);
  EXPECT_DOUBLE_EQ(rule.AllowedFor(run.samples[2]), 1e-6 + 1e-3 * 10);
  const std::vector<SampleMismatch> mismatches =
      FindMismatches(run, rule, {TensorRole::kOutput, TensorRole::kGradient});
  ASSERT_EQ(mismatches.size(), 1u);
  EXPECT_EQ(mismatches[0].sample->name, "out");
}

// A gradient with cancellation (a batch-norm bias's) may vary far beyond rtol between eager and its repeat at the first
// step: that does not make the spread a per-call host value, which loss and outputs would show.
TEST(NumericsRuleTest, AGradientsFirstStepSpreadIsStillNoise) {
  EngineRun run = Losses({1.0, 0.9}, {1.0, 0.9}, {1.0, 0.95});
  run.deterministic_settings = false;
  run.samples = {Sample("bn1.bias", TensorRole::kGradient, 0, 0.05, 0.1), Sample("out", TensorRole::kOutput, 0)};
  EXPECT_DOUBLE_EQ(Rule(run).Allowed(2, 0.01), 1e-6 + 1e-3 * 2 + 4 * 0.01);
}

TEST(NumericsRuleTest, MismatchesWorstFirstAndTheirTable) {
  EngineRun run = Losses({1.0}, {1.0}, {1.0});
  run.samples = {Sample("a", TensorRole::kOutput, 0.1, 0, 10), Sample("b", TensorRole::kOutput, 0.5, 0, 1),
                 Sample("c", TensorRole::kOutput, 0), Sample("g", TensorRole::kGradient, 9)};
  const NumericsRule rule = Rule(run);
  const std::vector<SampleMismatch> mismatches = FindMismatches(run, rule, {TensorRole::kOutput});
  ASSERT_EQ(mismatches.size(), 2u);            // "c" agrees, "g" is another role
  EXPECT_EQ(mismatches[0].sample->name, "b");  // 0.5 of 1 before 0.1 of 10
  EXPECT_EQ(mismatches[1].sample->name, "a");
  EXPECT_DOUBLE_EQ(Excess(0.5, 0, 1), 0.5);
  EXPECT_DOUBLE_EQ(Excess(0.5, 0.25, 1), 2);
  const std::vector<std::string> table = MismatchTable(mismatches, 1);
  ASSERT_EQ(table.size(), 2u);
  EXPECT_THAT(table[0], HasSubstr("output b (float32, 1024 elements): worst at [7], eager 1, graphed 1.5"));
  EXPECT_EQ(table[1], "and 1 more tensor");
}

// A count of one takes the singular: "1 element", "1 of 1 forward output", "and 1 more tensor".
TEST(NumericsRuleTest, OneOfAnythingIsSingular) {
  EngineRun run = Losses({1.0}, {1.0}, {1.0});
  run.samples = {Sample("out", TensorRole::kOutput, 0.5)};
  run.samples[0].numel = 1;
  const NumericsRule rule = Rule(run);
  const std::vector<SampleMismatch> mismatches = FindMismatches(run, rule, {TensorRole::kOutput});
  ASSERT_EQ(mismatches.size(), 1u);
  EXPECT_THAT(MismatchTable(mismatches, 1)[0], HasSubstr("output out (float32, 1 element): "));
  Finding finding;
  DescribeMismatches(run, rule, mismatches, TensorRole::kOutput, "forward output", "forward outputs", &finding);
  EXPECT_THAT(finding.message, HasSubstr("differ in 1 of 1 forward output; the worst is out."));
}

}  // namespace
}  // namespace graphcheck::checks
