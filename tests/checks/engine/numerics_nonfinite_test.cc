// numerics-nonfinite: NaN or Inf in the graphed run where eager has none (loss or tensors) is flagged; non-finite
// values eager has as well are not.
#include "checks/checks.h"

#include <cmath>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/checks/engine/numerics_test_util.h"

namespace graphcheck::checks {
namespace {

using ::testing::HasSubstr;
using testing_util::Losses;
using testing_util::Sample;

std::vector<Finding> Check(const EngineRun& run) {
  return testing_util::RunEngineCheck(*NewNumericsNonfiniteCheck(), run);
}

TEST(NumericsNonfiniteTest, FlagsANonFiniteGraphedLoss) {
  const auto findings = Check(Losses({1.0, 0.9, 0.8}, {1.0, std::nan(""), INFINITY}));
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].check_id, "numerics-nonfinite");
  EXPECT_THAT(findings[0].message, HasSubstr("not finite at 2 of 3 steps"));
  EXPECT_THAT(findings[0].message, HasSubstr("first at step 1"));
}

TEST(NumericsNonfiniteTest, FlagsNonFiniteTensors) {
  EngineRun run = Losses({1.0}, {1.0});
  NumericsSample weight = Sample("0.weight", TensorRole::kParameter, 0);
  weight.graphed_nonfinite = 12;
  run.samples = {Sample("output 0", TensorRole::kOutput, 0), weight};
  const auto findings = Check(run);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_THAT(findings[0].message, HasSubstr("not after the eager run in 1 tensor of builtin:mlp"));
  EXPECT_EQ(findings[0].where.key, "0.weight");
  EXPECT_THAT(findings[0].evidence[0], HasSubstr("12 of 1024 elements"));
}

TEST(NumericsNonfiniteTest, CleanWhenEagerIsNonFiniteToo) {
  EXPECT_TRUE(Check(Losses({1.0, NAN}, {1.0, NAN})).empty());
  EngineRun run = Losses({1.0}, {1.0});
  NumericsSample output = Sample("output 0", TensorRole::kOutput, 0);
  output.eager_nonfinite = output.graphed_nonfinite = 3;
  run.samples = {output};
  EXPECT_TRUE(Check(run).empty());
}

}  // namespace
}  // namespace graphcheck::checks
