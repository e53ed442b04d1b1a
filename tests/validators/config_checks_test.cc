// Registration of the configuration and capture-order checks: each once, all in the configuration area.
#include "validators/config/config_checks.h"

#include <gtest/gtest.h>

namespace graphcheck {
namespace {

TEST(ConfigChecksTest, RegistersEveryConfigurationRuleOnce) {
  CheckRegistry registry;
  ASSERT_TRUE(RegisterConfigurationChecks(&registry).ok());
  const std::vector<const Check*> checks = registry.All();
  EXPECT_EQ(checks.size(), 14u);
  for (const Check* check : checks) {
    EXPECT_EQ(check->info().area, CheckArea::kConfiguration) << check->info().id;
    EXPECT_TRUE(check->info().id.rfind("config-", 0) == 0 || check->info().id == "schedule-order")
        << check->info().id;
  }
  EXPECT_NE(registry.Find("schedule-order"), nullptr);
  EXPECT_EQ(RegisterConfigurationChecks(&registry).code(), absl::StatusCode::kAlreadyExists);
}

}  // namespace
}  // namespace graphcheck
