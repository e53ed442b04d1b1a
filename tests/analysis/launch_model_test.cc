// The launch model's options (analysis/launch_model.h): launch-bound's defaults are the model's own, and a value the
// user sets reaches the model.
#include "analysis/launch_model.h"

#include <gtest/gtest.h>

#include "core/check.h"

namespace graphcheck::analysis {
namespace {

CheckInfo LaunchBoundInfo() {
  CheckInfo info;
  info.id = "launch-bound";
  info.options = LaunchModelCheckOptions();
  return info;
}

TEST(LaunchModelTest, TheOptionsDefaultsAreTheModelsOwn) {
  const CheckInfo info = LaunchBoundInfo();
  const CheckOptions unset;
  const LaunchModel model = LaunchModelFrom(BoundOptions(info, unset));
  const LaunchModel defaults;
  EXPECT_EQ(model.graph_launch_us, defaults.graph_launch_us);
  EXPECT_EQ(model.graph_node_us, defaults.graph_node_us);
  EXPECT_EQ(model.short_kernel_us, defaults.short_kernel_us);
  EXPECT_EQ(model.min_forecast_steps, defaults.min_forecast_steps);
}

TEST(LaunchModelTest, AValueTheUserSetsReachesTheModel) {
  const CheckInfo info = LaunchBoundInfo();
  CheckOptions options;
  options.Set("launch-bound", "graph-launch-us", "4.5");
  options.Set("launch-bound", "min-steps", "9");
  const LaunchModel model = LaunchModelFrom(BoundOptions(info, options));
  EXPECT_EQ(model.graph_launch_us, 4.5);
  EXPECT_EQ(model.min_forecast_steps, 9u);
  EXPECT_EQ(model.graph_node_us, LaunchModel().graph_node_us);
}

}  // namespace
}  // namespace graphcheck::analysis
