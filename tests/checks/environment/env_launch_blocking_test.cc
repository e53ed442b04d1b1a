#include "checks/checks.h"

#include <gtest/gtest.h>

#include "tests/checks/environment/env_checks_common.h"

namespace graphcheck::checks {
namespace {

using testing_env::Env;
using testing_env::RunOn;

TEST(EnvLaunchBlockingTest, FlagsLaunchBlocking) {
  auto findings = RunOn(*NewEnvLaunchBlockingCheck(), Env({{"CUDA_LAUNCH_BLOCKING", "1"}}));
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].check_id, "env-launch-blocking");
  EXPECT_EQ(findings[0].where.key, "CUDA_LAUNCH_BLOCKING");
  EXPECT_FALSE(findings[0].fix.empty());
}

TEST(EnvLaunchBlockingTest, CleanWhenUnsetOrZero) {
  EXPECT_TRUE(RunOn(*NewEnvLaunchBlockingCheck(), Env({})).empty());
  EXPECT_TRUE(RunOn(*NewEnvLaunchBlockingCheck(), Env({{"CUDA_LAUNCH_BLOCKING", "0"}})).empty());
}

}  // namespace
}  // namespace graphcheck::checks
