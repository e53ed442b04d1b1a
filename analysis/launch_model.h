// The model of what a graphed step costs, from which the savings forecast is made (launch_metrics.h): one graph
// launch plus a cost per node, kernels counted short below a length, and how many eager steps a forecast needs. A
// plain setting of the analysis (AnalysisSettings::launch); the user sets its numbers as launch-bound's options, which
// checks/trace/launch_model_options.h reads into it once, with these values as their defaults.
#ifndef GRAPHCHECK_ANALYSIS_LAUNCH_MODEL_H_
#define GRAPHCHECK_ANALYSIS_LAUNCH_MODEL_H_

#include <cstddef>
#include <string>

namespace graphcheck::analysis {

struct LaunchModel {
  double graph_launch_us = 2.5;  // one cudaGraphLaunch, host and device
  double graph_node_us = 0.1;    // per node
  double short_kernel_us = 10;   // kernels shorter than this are "short"
  // Fewer eager steps than this (after the step range, which leaves out the first, warmup step) give no forecast: the
  // first steps of a short program are dominated by first-call work (library handles, module loads, allocator
  // growth), and a forecast from them says "a saving of 100%".
  size_t min_forecast_steps = 4;
  // NVTX ranges inside a step that mark the parts a graph would replay (graphcheck check marks forward and backward,
  // whose optimizer step and loss stay eager); a step without them is graphed whole.
  std::string graphable_range = "graphcheck:graphable";
};

}  // namespace graphcheck::analysis

#endif  // GRAPHCHECK_ANALYSIS_LAUNCH_MODEL_H_
