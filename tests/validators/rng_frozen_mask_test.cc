// rng-frozen-mask on constructed RngDraws: replays that repeat their capture-time draws are flagged; replays that draw
// anew, and a model without randomness, are not.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/validators/rng_test_util.h"
#include "validators/rng/rng_frozen_mask.h"

namespace graphcheck {
namespace {

using ::testing::HasSubstr;
using testing_util::kDrawsOnlyInEager;
using testing_util::kDropoutAsEager;
using testing_util::kHostShiftFrozen;
using testing_util::RunEngineCheck;
using testing_util::WithDraws;

TEST(RngFrozenMaskTest, FlagsReplaysThatRepeatTheirDraws) {
  const std::vector<Finding> findings = RunEngineCheck<RngFrozenMaskCheck>(WithDraws(kHostShiftFrozen));
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].check_id, "rng-frozen-mask");
  EXPECT_EQ(findings[0].severity, Severity::kError);
  EXPECT_THAT(findings[0].message, HasSubstr("two eager calls on the same input differ by up to 2.5"));
  EXPECT_THAT(findings[0].fix, HasSubstr("on the GPU"));
}

TEST(RngFrozenMaskTest, LeavesDrawsThatAdvanceAlone) {
  EXPECT_THAT(RunEngineCheck<RngFrozenMaskCheck>(WithDraws(kDropoutAsEager)), ::testing::IsEmpty());
  EXPECT_THAT(RunEngineCheck<RngFrozenMaskCheck>(WithDraws(kDrawsOnlyInEager)), ::testing::IsEmpty());
  EXPECT_THAT(RunEngineCheck<RngFrozenMaskCheck>(WithDraws({0, 0, 0, 0, 3, 0, 0})), ::testing::IsEmpty());
}

}  // namespace
}  // namespace graphcheck
