// Registration of the environment checks: all land in a registry under their ids, read only the environment, and a
// second registration is refused (ids are unique).
#include "validators/environment_checks.h"

#include <gtest/gtest.h>

#include "core/environment.h"

namespace graphcheck {
namespace {

TEST(EnvironmentChecksTest, RegistersTheEnvironmentChecks) {
  CheckRegistry registry;
  ASSERT_TRUE(RegisterEnvironmentChecks(&registry).ok());
  EXPECT_EQ(registry.All().size(), 4u);
  for (const char* id : {"env-expandable-segments-nccl-register", "env-launch-blocking",
                         "env-nccl-async-error-handling", "env-no-caching-allocator"}) {
    const Check* check = registry.Find(id);
    ASSERT_NE(check, nullptr) << id;
    EXPECT_FALSE(check->CanRun(CheckInputs{})) << id;
    const Environment environment;
    CheckInputs with_environment;
    with_environment.environment = &environment;
    EXPECT_TRUE(check->CanRun(with_environment)) << id;
  }
  EXPECT_EQ(RegisterEnvironmentChecks(&registry).code(), absl::StatusCode::kAlreadyExists);
}

}  // namespace
}  // namespace graphcheck
