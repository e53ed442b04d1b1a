// Launch-overhead statistics of a trace's steps (after Holistic Trace Analysis' kernel-launch statistics and idle
// time) and the forecast of what CUDA graphs would save. Read by launch-bound and no-speedup, and reported as metrics.
//
// The model (docs/analyzers.md): a graphed step runs the same kernels back to back, so its time is the GPU's busy
// time in the eager step (the union of kernel intervals, which keeps multi-stream overlap) plus one graph launch
// (graph-launch-us) plus a per-node cost (graph-node-us) for each kernel, copy and memset. Host work that the step does
// between launches disappears from the step; the saving is the eager step time minus that forecast.
#ifndef GRAPHCHECK_ANALYSIS_LAUNCH_METRICS_H_
#define GRAPHCHECK_ANALYSIS_LAUNCH_METRICS_H_

#include <vector>

#include "analysis/iterations.h"
#include "analysis/launch_model.h"
#include "core/check.h"
#include "core/quantile.h"
#include "core/report.h"

namespace graphcheck::analysis {

class TraceAnalysis;

// One speedup per check report: the engine's CUDA-event step times (check.*) are the measurement. The trace's
// graphed.speedup and graphed.forecast_error_ratio, computed from steps whose launches the recorder recorded (and so
// lengthened), are dropped; the trace's forecast (launch.forecast_graphed_us) is compared with the engine's times
// instead: check.forecast_graphed_us (with the unrecorded time outside the graphable parts, when the engine measured
// it, in place of the trace's), check.forecast_savings_us and check.forecast_error_ratio.
void UseEngineTimesForTheForecast(std::vector<Metric>* metrics);

// Per-step medians (each field's median over the steps). Times in microseconds.
struct StepStats {
  size_t steps = 0;
  double step_us = 0;      // max(host span, GPU span) of the step
  double step_us_p10 = 0;  // the spread of step_us: its 10th and 90th percentiles
  double step_us_p90 = 0;
  double kernels = 0;  // kernels run (launched one by one)
  double graph_launches = 0;
  double nodes = 0;             // kernels, copies and memsets: the nodes a graph of the step would hold
  double replayed_kernels = 0;  // kernels its graph launches ran (GPU records; 0 where activity was not recorded)
  double gpu_busy_us = 0;       // union of kernel (and graph) intervals
  double gpu_idle_us = 0;       // step_us - gpu_busy_us
  double cpu_launch_us = 0;     // time inside launch calls
  double kernel_launch_us = 0;  // of it, inside kernel launch calls (not graph launches)
  double launch_delay_us = 0;   // mean over kernels of (kernel start - launch call start)
  double short_kernels = 0;
  // The parts a graph would replay (the whole step unless it holds graphable ranges): their count (graph launches),
  // kernels, copies and memsets, GPU busy time, and the time of the rest of the step, which stays eager.
  double graphable_parts = 0;
  double graphable_nodes = 0;
  double graphable_gpu_busy_us = 0;
  double graphable_gpu_span_us = 0;  // first kernel start to last kernel end of the parts (0: no graphable ranges)
  double outside_graphable_us = 0;
  double outside_gpu_busy_us = 0;  // GPU busy time of the kernels outside the parts (0: no graphable ranges)
  // Host time of the step outside its first launch call's start to its last one's end: work graphs do not remove.
  double outside_launching_us = 0;
};

struct LaunchStats {
  std::string source;  // how steps were found
  StepStats eager;     // the eager steps whose launches were recorded: kernels, GPU times
  StepStats graphed;
  // Eager steps that no launch-recording window touched run as the program runs without graphcheck's launch
  // callbacks (NVTX and synchronizations are always recorded): their mean host span, when there are at least
  // min_forecast_steps of them, is the step time the forecast and the speedup use (no lower than the recorded GPU
  // busy time: a GPU-bound step's host can run ahead). Else the recorded steps' step_us, which the recorder inflates.
  // Medians, with the 10th and 90th percentiles.
  size_t unperturbed_steps = 0;
  double unperturbed_step_us = 0;
  double unperturbed_step_us_p10 = 0;
  double unperturbed_step_us_p90 = 0;
  bool step_time_unperturbed = false;
  // The time outside graphable ranges, from those unperturbed steps where they have the ranges (NVTX is recorded
  // there): each step less the longer of its ranges' host time and the recorded steps' GPU span of them. The recorder
  // slows the loss and optimizer launches outside the ranges as much as any other.
  double outside_graphable_us = 0;  // what the forecast uses: from the unperturbed steps, else the recorded ones
  bool outside_graphable_unperturbed = false;
  double eager_step_us = 0;  // the step time the forecast and the speedup use
  // Every graphed step, also those outside launch recording (their replays are recorded in every mode, their GPU
  // times only inside windows): with such steps, the median of all graphed steps' host spans, no lower than the
  // recorded graphed GPU busy time; else the recorded steps' step_us. What graphed.iteration_us and the speedup use.
  size_t graphed_steps = 0;
  double graphed_step_us = 0;
  double graphed_step_us_p10 = 0;
  double graphed_step_us_p90 = 0;
  bool forecast = false;  // enough eager steps with GPU times to forecast from
  // A graphed step ends when both the host and the GPU are done with it, and the two overlap: the host launches the
  // graphs and runs the eager rest (loss, optimizer) while the GPU replays the graphs, then runs the eager kernels
  // queued behind them. Host path: the eager rest's time + graph launches; GPU path: the graphs' GPU busy time and
  // node costs + graph launches + the eager kernels' GPU busy time. The forecast is the longer of the two (a sum
  // over-forecast GPU-bound graphed steps by 10-25% on an H100: the engine's transformer, ResNet-18, MobileNetV3).
  double forecast_host_path_us = 0;
  double forecast_gpu_path_us = 0;
  double forecast_graphed_us = 0;  // per eager step: max(host path, GPU path)
  double forecast_savings_us = 0;
  double forecast_savings_ratio = 0;

  // "42 eager steps outside launch recording (NVTX step)" or "5 eager steps with launches recorded (NVTX step)".
  std::string StepTimeSource() const;
};

LaunchStats ComputeLaunchStats(const TraceAnalysis& analysis, const IterationOptions& iterations,
                               const LaunchModel& model);
// Each step's time, as the step metrics take it (their medians and quantiles are of these): the longer of the step's
// host span and the GPU span of its own work (the kernels it launched, the graphs it replayed), so that a GPU-bound
// step whose host ran ahead is not its host span. The report's plots use the same (report_timeline.h).
std::vector<double> StepTimesUs(const TraceAnalysis& analysis, const std::vector<Iteration>& steps);
// Each of `steps`' own figures (steps = 1 in each), from which the medians are taken: any span of the program can be
// measured as a step (graphcheck plan measures module calls).
std::vector<StepStats> PerStepStats(const TraceAnalysis& analysis, const std::vector<Iteration>& steps,
                                    const LaunchModel& model);
// Metric names: launch.* for eager steps and the forecast, graphed.* for replayed steps (see docs/analyzers.md).
// Empty when no steps were found.
std::vector<Metric> LaunchMetrics(const LaunchStats& stats);

}  // namespace graphcheck::analysis

#endif  // GRAPHCHECK_ANALYSIS_LAUNCH_METRICS_H_
