// rng-eager-mismatch on constructed RngDraws: replays that advance the generator by another amount than eager and
// draw other numbers from the same seed are flagged; replays that draw as eager does, frozen draws (rng-frozen-mask's)
// and a run without the measurement are not.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "checks/checks.h"
#include "tests/checks/engine/rng_test_util.h"

namespace graphcheck::checks {
namespace {

using ::testing::HasSubstr;
using testing_util::kDrawsOnlyInEager;
using testing_util::kDropoutAsEager;
using testing_util::kHostShiftFrozen;
using testing_util::Losses;
using testing_util::RunEngineCheck;
using testing_util::WithDraws;

TEST(RngEagerMismatchTest, FlagsReplaysThatAdvanceTheGeneratorOtherwise) {
  const std::vector<Finding> findings = RunEngineCheck(*NewRngEagerMismatchCheck(), WithDraws(kDrawsOnlyInEager));
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].check_id, "rng-eager-mismatch");
  EXPECT_THAT(findings[0].message, HasSubstr("advances the CUDA generator by 8, a replay by 4"));
}

TEST(RngEagerMismatchTest, LeavesReplaysThatDrawAsEagerAlone) {
  EXPECT_THAT(RunEngineCheck(*NewRngEagerMismatchCheck(), WithDraws(kDropoutAsEager)), ::testing::IsEmpty());
  EXPECT_THAT(RunEngineCheck(*NewRngEagerMismatchCheck(), WithDraws(kHostShiftFrozen)), ::testing::IsEmpty());
  EXPECT_THAT(RunEngineCheck(*NewRngEagerMismatchCheck(), Losses({1}, {1})), ::testing::IsEmpty());
}

}  // namespace
}  // namespace graphcheck::checks
