// numerics-grad: gradients that differ while the outputs agree are flagged; where the outputs differ too,
// numerics-forward names the cause and this check is silent.
#include "validators/checks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/validators/numerics_test_util.h"

namespace graphcheck {
namespace {

using ::testing::HasSubstr;
using testing_util::Losses;
using testing_util::Sample;

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

}  // namespace
}  // namespace graphcheck
