#include "checks/checks.h"

#include <gtest/gtest.h>

#include "tests/checks/environment/env_checks_common.h"

namespace graphcheck::checks {
namespace {

using testing_env::Env;
using testing_env::RunOn;

TEST(EnvNoCachingAllocatorTest, FlagsDisabledCachingAllocator) {
  auto findings = RunOn(*NewEnvNoCachingAllocatorCheck(), Env({{"PYTORCH_NO_CUDA_MEMORY_CACHING", "1"}}));
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].check_id, "env-no-caching-allocator");
  EXPECT_EQ(findings[0].severity, Severity::kError);
}

TEST(EnvNoCachingAllocatorTest, CleanWhenUnset) {
  EXPECT_TRUE(RunOn(*NewEnvNoCachingAllocatorCheck(), Env({{"PYTORCH_NO_CUDA_MEMORY_CACHING", "0"}})).empty());
  EXPECT_TRUE(RunOn(*NewEnvNoCachingAllocatorCheck(), Env({})).empty());
}

}  // namespace
}  // namespace graphcheck::checks
