// The one quantile rule (core/quantile.h): nearest rank, ties to the lower rank.
#include "core/quantile.h"

#include <gtest/gtest.h>

#include <vector>

namespace graphcheck {
namespace {

TEST(QuantileTest, TheMedianOfAnEvenCountIsTheLowerMiddleValue) {
  // Two steps, the first cold: the median is the warm one (capture_item's 142 ms first step was its median).
  EXPECT_EQ(Quantile({142000, 2003}, 0.5), 2003);
  EXPECT_EQ(Quantile({4, 1, 3, 2}, 0.5), 2);
  EXPECT_EQ(Quantile({5, 1, 3}, 0.5), 3);
}

TEST(QuantileTest, ThePercentilesAreValuesSomeStepHad) {
  std::vector<double> values;
  for (int i = 1; i <= 10; ++i) values.push_back(i);
  EXPECT_EQ(Quantile(values, 0.1), 2);  // rank 0.9 -> 1
  EXPECT_EQ(Quantile(values, 0.9), 9);  // rank 8.1 -> 8
  EXPECT_EQ(Quantile(values, 0), 1);
  EXPECT_EQ(Quantile(values, 1), 10);
  EXPECT_EQ(Quantile({}, 0.5), 0);
  EXPECT_EQ(QuantileRank(1, 0.5), 0u);
}

}  // namespace
}  // namespace graphcheck
