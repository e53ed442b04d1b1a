#include "validators/env_nccl_async_error_handling.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/validators/env_checks_common.h"

namespace graphcheck {
namespace {

using ::testing::HasSubstr;
using testing_env::Env;
using testing_env::RunOn;

const EnvNcclAsyncErrorHandlingCheck kCheck;

TEST(EnvNcclAsyncErrorHandlingTest, WarnsInADistributedJobWithHandlingOn) {
  auto unset = RunOn(kCheck, Env({{"WORLD_SIZE", "8"}}));
  ASSERT_EQ(unset.size(), 1u);
  EXPECT_EQ(unset[0].severity, Severity::kWarning);
  EXPECT_THAT(unset[0].message, HasSubstr("watchdog"));
  EXPECT_EQ(RunOn(kCheck, Env({{"WORLD_SIZE", "2"}, {"TORCH_NCCL_ASYNC_ERROR_HANDLING", "3"}})).size(), 1u);
}

TEST(EnvNcclAsyncErrorHandlingTest, CleanWhenOffOrNotDistributed) {
  EXPECT_TRUE(RunOn(kCheck, Env({{"WORLD_SIZE", "8"}, {"TORCH_NCCL_ASYNC_ERROR_HANDLING", "0"}})).empty());
  EXPECT_TRUE(RunOn(kCheck, Env({{"WORLD_SIZE", "1"}})).empty());
  EXPECT_TRUE(RunOn(kCheck, Env({})).empty());
}

TEST(EnvNcclAsyncErrorHandlingTest, DistributedOptionOverridesDetection) {
  CheckOptions yes;
  yes.Set("env-nccl-async-error-handling", "distributed", "yes");
  EXPECT_EQ(RunOn(kCheck, Env({}), yes).size(), 1u);
  CheckOptions no;
  no.Set("env-nccl-async-error-handling", "distributed", "no");
  EXPECT_TRUE(RunOn(kCheck, Env({{"WORLD_SIZE", "8"}}), no).empty());
}

}  // namespace
}  // namespace graphcheck
