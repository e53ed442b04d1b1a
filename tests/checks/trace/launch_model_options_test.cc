// The launch model as the user sets it (checks/trace/launch_model_options.h): launch-bound lists the model's numbers
// with the model's own values as defaults, and a value set for one of them reaches the plain model the analysis gets.
#include "checks/trace/launch_model_options.h"

#include <map>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "checks/checks.h"
#include "core/check_ids.h"

namespace graphcheck::checks {
namespace {

TEST(LaunchModelOptionsTest, NothingSetIsTheModelsOwnValues) {
  const analysis::LaunchModel model = LaunchModelFromOptions(CheckOptions());
  const analysis::LaunchModel defaults;
  EXPECT_EQ(model.graph_launch_us, defaults.graph_launch_us);
  EXPECT_EQ(model.graph_node_us, defaults.graph_node_us);
  EXPECT_EQ(model.short_kernel_us, defaults.short_kernel_us);
  EXPECT_EQ(model.min_forecast_steps, defaults.min_forecast_steps);
  EXPECT_EQ(model.graphable_range, defaults.graphable_range);
}

TEST(LaunchModelOptionsTest, AValueTheUserSetsReachesTheModel) {
  CheckOptions options;
  options.Set(check_id::kLaunchBound, "graph-launch-us", "4.5");
  options.Set(check_id::kLaunchBound, "min-steps", "9");
  const analysis::LaunchModel model = LaunchModelFromOptions(options);
  EXPECT_EQ(model.graph_launch_us, 4.5);
  EXPECT_EQ(model.min_forecast_steps, 9u);
  EXPECT_EQ(model.graph_node_us, analysis::LaunchModel().graph_node_us);
}

// Every option launch-bound lists but its own threshold is one of the model's: set, it moves the model. Their
// defaults, as list-checks and the docs show them, are the model's values.
TEST(LaunchModelOptionsTest, EachModelOptionLaunchBoundListsReachesTheModel) {
  const std::unique_ptr<Check> check = NewLaunchBoundCheck();
  std::map<std::string, std::string> listed;
  for (const CheckOption& option : check->info().options) listed[option.name] = option.default_value;
  EXPECT_EQ(listed, (std::map<std::string, std::string>{{"graph-launch-us", "2.5"},
                                                        {"graph-node-us", "0.1"},
                                                        {"short-kernel-us", "10"},
                                                        {"min-steps", "4"},
                                                        {"min-savings", "0.2"}}));
  const analysis::LaunchModel defaults;
  size_t model_options = 0;
  for (const CheckOption& option : check->info().options) {
    if (option.name == "min-savings") continue;
    ++model_options;
    CheckOptions options;
    options.Set(check_id::kLaunchBound, option.name, "7");
    const analysis::LaunchModel model = LaunchModelFromOptions(options);
    EXPECT_TRUE(model.graph_launch_us != defaults.graph_launch_us || model.graph_node_us != defaults.graph_node_us ||
                model.short_kernel_us != defaults.short_kernel_us ||
                model.min_forecast_steps != defaults.min_forecast_steps)
        << option.name;
  }
  EXPECT_EQ(model_options, 4u);
}

}  // namespace
}  // namespace graphcheck::checks
