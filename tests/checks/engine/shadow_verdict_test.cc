// The verdicts on --shadow's comparisons (checks/engine/shadow_verdict.h) that numerics-forward, numerics-grad,
// replay-mismatch and rng-frozen-mask report: one per module or graph in the order first compared, each call judged
// by its subject's rule, host draws apart, comparisons marked random left out.
#include "checks/engine/shadow_verdict.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "checks/checks.h"
#include "core/check.h"
#include "tests/checks/engine/shadow_test_util.h"

namespace graphcheck::checks {
namespace {

using testing_util::ShadowTrace;
using trace::ShadowSubject;

std::vector<ShadowVerdict> Judge(const ShadowTrace& shadow, ShadowSubject subject, bool host_draws = false) {
  const std::unique_ptr<Check> check = NewNumericsForwardCheck();  // the numerics rule's options, with defaults
  return JudgeShadowComparisons(shadow.trace(), subject, host_draws, BoundOptions(check->info(), {}));
}

TEST(ShadowVerdictTest, OneVerdictPerModuleInTheOrderFirstCompared) {
  ShadowTrace shadow;
  shadow.Compare(8, 1, 0).Compare(7, 1, 0.5).Compare(8, 2, 1.0).Compare(8, 3, 0.2);
  const std::vector<ShadowVerdict> verdicts = Judge(shadow, ShadowSubject::kModuleForward);
  ASSERT_EQ(verdicts.size(), 2u);
  EXPECT_EQ(verdicts[0].owner, 8u);
  EXPECT_EQ(verdicts[0].compared, 3);
  EXPECT_EQ(verdicts[0].differing, 2);
  ASSERT_NE(verdicts[0].worst, nullptr);
  EXPECT_EQ(verdicts[0].worst->call, 2u);  // the call that exceeds its rule the most
  EXPECT_EQ(verdicts[1].owner, 7u);
  EXPECT_EQ(verdicts[1].differing, 1);
}

TEST(ShadowVerdictTest, HostDrawsAndRandomComparisonsAreApart) {
  ShadowTrace shadow;
  shadow.Compare(7, 1, 0.5).Draws("cpu").Compare(7, 2, 0.5).Draws("cuda").Compare(7, 3, 0.5, 0, /*random=*/true);
  const std::vector<ShadowVerdict> device = Judge(shadow, ShadowSubject::kModuleForward);
  ASSERT_EQ(device.size(), 1u);
  EXPECT_EQ(device[0].compared, 1);  // call 2: a CUDA draw is put back and compared
  const std::vector<ShadowVerdict> host = Judge(shadow, ShadowSubject::kModuleForward, /*host_draws=*/true);
  ASSERT_EQ(host.size(), 1u);
  EXPECT_EQ(host[0].compared, 1);
  EXPECT_EQ(host[0].host_draws, "cpu");
}

TEST(ShadowVerdictTest, AccumulationIsJudgedExactlyAndGradientsByTheirTolerance) {
  // The same tiny difference: within a gradient's tolerance, beyond what exact accumulation allows.
  ShadowTrace shadow;
  shadow.Subject(ShadowSubject::kModuleBackward)
      .Compare(7, 1, 1e-7, 0, false, "gradient 0.weight")
      .Subject(ShadowSubject::kGradAccumulation)
      .Compare(7, 1, 1e-7, 0, false, "gradient 0.weight");
  const std::vector<ShadowVerdict> gradients = Judge(shadow, ShadowSubject::kModuleBackward);
  ASSERT_EQ(gradients.size(), 1u);
  EXPECT_EQ(gradients[0].differing, 0);
  const std::vector<ShadowVerdict> accumulation = Judge(shadow, ShadowSubject::kGradAccumulation);
  ASSERT_EQ(accumulation.size(), 1u);
  EXPECT_EQ(accumulation[0].differing, 1);
  EXPECT_EQ(accumulation[0].worst_name, "gradient 0.weight");
  EXPECT_THAT(accumulation[0].table.front(), ::testing::HasSubstr("bit for bit"));
}

}  // namespace
}  // namespace graphcheck::checks
