#include "validators/env_no_caching_allocator.h"

#include <gtest/gtest.h>

#include "tests/validators/env_checks_common.h"

namespace graphcheck {
namespace {

using testing_env::Env;
using testing_env::RunOn;

TEST(EnvNoCachingAllocatorTest, FlagsDisabledCachingAllocator) {
  auto findings = RunOn(EnvNoCachingAllocatorCheck(), Env({{"PYTORCH_NO_CUDA_MEMORY_CACHING", "1"}}));
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].check_id, "env-no-caching-allocator");
  EXPECT_EQ(findings[0].severity, Severity::kError);
}

TEST(EnvNoCachingAllocatorTest, CleanWhenUnset) {
  EXPECT_TRUE(RunOn(EnvNoCachingAllocatorCheck(), Env({{"PYTORCH_NO_CUDA_MEMORY_CACHING", "0"}})).empty());
  EXPECT_TRUE(RunOn(EnvNoCachingAllocatorCheck(), Env({})).empty());
}

}  // namespace
}  // namespace graphcheck
