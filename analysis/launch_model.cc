#include "analysis/launch_model.h"

namespace graphcheck::analysis {

std::vector<CheckOption> LaunchModelCheckOptions() {
  return {
      {"graph-launch-us", "2.5", "forecast: cost of one graph launch, microseconds", 0, 1e6},
      {"graph-node-us", "0.1", "forecast: cost per graph node (kernel, copy, memset), microseconds", 0, 1e6},
      {"short-kernel-us", "10", "kernels shorter than this count as short, microseconds", 0, 1e9},
      {"min-steps", "4", "forecast only from at least this many eager steps (after the step range)", 1, 1e9},
  };
}

LaunchModel LaunchModelFrom(const BoundOptions& options) {
  LaunchModel model;
  model.graph_launch_us = options.GetDouble("graph-launch-us");
  model.graph_node_us = options.GetDouble("graph-node-us");
  model.short_kernel_us = options.GetDouble("short-kernel-us");
  model.min_forecast_steps = static_cast<size_t>(options.GetDouble("min-steps"));
  return model;
}

}  // namespace graphcheck::analysis
