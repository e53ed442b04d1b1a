// numerics-forward: first-step outputs that differ from eager are flagged, worst first; outputs within the rule, or
// differing only as much as eager differs from itself, are not; a repeat that differs at the first step is not noise.
#include "validators/numerics/numerics_forward.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/validators/numerics_test_util.h"

namespace graphcheck {
namespace {

using ::testing::HasSubstr;
using testing_util::Losses;
using testing_util::Sample;

std::vector<Finding> Check(const EngineRun& run, const CheckOptions& options = {}) {
  return testing_util::RunEngineCheck<NumericsForwardCheck>(run, options);
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

}  // namespace
}  // namespace graphcheck
