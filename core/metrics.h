// The catalogue of metrics: every metric a report can carry, with its unit and what it measures. Producers make
// their metrics from it (kLaunchIterationUs.With(value)); reports, diff, the verdict and the plots find them by its
// names. A metric's scope (one process of several, one maker of graphs, a job's extreme rank) is a field beside its
// name (core/report.h: MetricScope), spelled into the name only where a report is written.
#ifndef GRAPHCHECK_CORE_METRICS_H_
#define GRAPHCHECK_CORE_METRICS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "core/report.h"

namespace graphcheck::metric {

// Which way a metric improves: what `diff` and `--baseline` call a regression.
enum class Better : uint8_t { kLower, kHigher };

struct Spec {
  const char* name;
  const char* unit;
  const char* description;
  Better better = Better::kLower;  // times, counts, errors: lower; speedups, savings, shares graphed: higher
  // Reported per maker of graphs too (MetricScope::origin: "NAME.ORIGIN"), besides the whole run's value. Every
  // metric may also be one process's of several ("pid<P>.NAME") or a job's extreme rank ("NAME.min", "NAME.max").
  bool by_origin = false;

  Metric With(double value) const { return Metric{name, value, unit, description, {}}; }
  // A description that says where this value came from (which steps, which ranges).
  Metric With(double value, std::string described) const { return Metric{name, value, unit, std::move(described), {}}; }
};

// eager steps and what graphs would save (analysis/launch_metrics.cc)
inline constexpr Spec kLaunchIterations{"launch.iterations", "count", "eager steps with launches recorded"};
inline constexpr Spec kLaunchIterationUs{"launch.iteration_us", "us", "eager step time the forecast uses, median"};
inline constexpr Spec kLaunchIterationUsP10{"launch.iteration_us_p10", "us",
                                            "eager step time, 10th percentile of the same steps"};
inline constexpr Spec kLaunchIterationUsP90{"launch.iteration_us_p90", "us",
                                            "eager step time, 90th percentile of the same steps"};
inline constexpr Spec kLaunchKernelsPerIteration{"launch.kernels_per_iteration", "count",
                                                 "kernels launched one by one per step, median"};
inline constexpr Spec kLaunchCpuLaunchUs{"launch.cpu_launch_us", "us",
                                         "host time inside launch calls per step, median"};
inline constexpr Spec kLaunchUnperturbedIterations{"launch.unperturbed_iterations", "count",
                                                   "eager steps no launch-recording window touched"};
inline constexpr Spec kLaunchRecordedIterationUs{
    "launch.recorded_iteration_us", "us",
    "eager step time with launches recorded: max of host span and GPU span, median"};
inline constexpr Spec kLaunchRecorderPerturbationRatio{"launch.recorder_perturbation_ratio", "ratio",
                                                       "how much recording launches lengthened the eager step"};
inline constexpr Spec kLaunchGpuBusyUs{"launch.gpu_busy_us", "us",
                                       "GPU busy time per step (union of kernel intervals), median"};
inline constexpr Spec kLaunchGpuIdleUs{"launch.gpu_idle_us", "us",
                                       "GPU idle time per step (gaps between kernels), median"};
inline constexpr Spec kLaunchGpuUtilization{"launch.gpu_utilization", "ratio", "GPU busy time / step time",
                                            Better::kHigher};
inline constexpr Spec kLaunchLaunchDelayUs{"launch.launch_delay_us", "us", "mean of kernel start - launch call start"};
inline constexpr Spec kLaunchShortKernelsPerIteration{"launch.short_kernels_per_iteration", "count",
                                                      "kernels shorter than short-kernel-us"};
inline constexpr Spec kLaunchForecastGraphedUs{
    "launch.forecast_graphed_us", "us",
    "forecast step time if graphed: the longer of the GPU path (GPU busy of what the graphs replay + graph launches + "
    "per-node cost + the GPU busy of what stays eager) and the host path (graph launches + the part of the step "
    "outside graphcheck:graphable ranges, which stays eager)"};
inline constexpr Spec kLaunchForecastSavingsUs{"launch.forecast_savings_us", "us",
                                               "eager step time - forecast graphed time", Better::kHigher};
inline constexpr Spec kLaunchForecastSavingsRatio{"launch.forecast_savings_ratio", "ratio",
                                                  "forecast savings / eager step time", Better::kHigher};
inline constexpr Spec kLaunchOutsideGraphableUs{
    "launch.outside_graphable_us", "us",
    "step time outside its graphcheck:graphable ranges (loss, optimizer, host work): stays eager"};
inline constexpr Spec kLaunchForecastHostPathUs{
    "launch.forecast_host_path_us", "us", "the graphed step's host path: graph launches + the eager rest of the step"};
inline constexpr Spec kLaunchForecastGpuPathUs{"launch.forecast_gpu_path_us", "us",
                                               "the graphed step's GPU path: the graphs' GPU busy time, node costs and "
                                               "launches + the GPU busy time of the kernels that stay eager"};

// the steps that replayed graphs (analysis/launch_metrics.cc)
inline constexpr Spec kGraphedIterations{"graphed.iterations", "count", "graphed steps analyzed"};
inline constexpr Spec kGraphedIterationUs{"graphed.iteration_us", "us", "measured graphed step time, median"};
inline constexpr Spec kGraphedIterationUsP10{"graphed.iteration_us_p10", "us", "graphed step time, 10th percentile"};
inline constexpr Spec kGraphedIterationUsP90{"graphed.iteration_us_p90", "us", "graphed step time, 90th percentile"};
inline constexpr Spec kGraphedGraphLaunchesPerIteration{"graphed.graph_launches_per_iteration", "count",
                                                        "graph launches per step"};
inline constexpr Spec kGraphedGpuBusyUs{"graphed.gpu_busy_us", "us", "GPU busy time per graphed step"};
inline constexpr Spec kGraphedSpeedup{"graphed.speedup", "ratio", "eager step time / graphed step time",
                                      Better::kHigher};
inline constexpr Spec kGraphedForecastErrorRatio{"graphed.forecast_error_ratio", "ratio",
                                                 "(forecast graphed - measured graphed) / measured graphed"};

// what share of the steps ran in graphs (analysis/coverage.cc); per maker: NAME.ORIGIN
inline constexpr Spec kCoverageSteps{"coverage.steps", "count",
                                     "steps with kernel records that coverage is computed over"};
inline constexpr Spec kCoverageStepsWithoutRecords{
    "coverage.steps_without_records", "count",
    "steps left out of coverage: launch recording was off there (sampled recording)"};
inline constexpr Spec kCoverageGraphedKernelShare{
    "coverage.graphed_kernel_share", "ratio",
    "share of the counted steps' kernels replayed from CUDA graphs (the rest launched one by one)", Better::kHigher,
    true};
inline constexpr Spec kCoverageGraphedGpuTimeShare{
    "coverage.graphed_gpu_time_share", "ratio",
    "share of the counted steps' GPU time spent in CUDA graph replays (the rest in kernels launched one by one)",
    Better::kHigher, true};
inline constexpr Spec kCoverageEagerGpuUs{"coverage.eager_gpu_us", "us",
                                          "GPU time of the kernels launched one by one per counted step (median)"};

// the memory forecast (analysis/memory_forecast.cc)
inline constexpr Spec kMemoryForecastSteps{"memory.forecast_steps", "count",
                                           "eager steps the caching allocator's history covers"};
inline constexpr Spec kMemoryForecastPoolBytes{"memory.forecast_pool_bytes", "bytes",
                                               "forecast: the private pool a CUDA graph of the step would hold (one "
                                               "pool), largest over the steps, cuBLAS workspaces included"};
inline constexpr Spec kMemoryForecastWorkspaceBytes{
    "memory.forecast_workspace_bytes", "bytes",
    "of it, the cuBLAS workspaces the first graph captured on a stream allocates in its pool"};
inline constexpr Spec kMemoryForecastLivePeakBytes{"memory.forecast_live_peak_bytes", "bytes",
                                                   "the most the step's own allocations held at once"};
inline constexpr Spec kMemoryForecastOutlivingBytes{
    "memory.forecast_outliving_bytes", "bytes",
    "what the step allocated and still held at its end (outputs, gradients): kept in the pool"};
inline constexpr Spec kMemoryForecastPrivatePoolsBytes{
    "memory.forecast_private_pools_bytes", "bytes",
    "forecast: the same ranges graphed each into its own private pool, summed"};

// torch.compile's cudagraph trees (analysis/python_probe.cc)
inline constexpr Spec kCompileRecordings{"compile.recordings", "count",
                                         "graphs torch.compile's cudagraph trees recorded"};
inline constexpr Spec kCompileRecordingCallSites{"compile.recording_call_sites", "count",
                                                 "the program's distinct lines whose calls recorded them"};
inline constexpr Spec kCompileReplays{"compile.replays", "count", "launches of the graphs cudagraph trees recorded"};
inline constexpr Spec kCompileCudagraphSkips{
    "compile.cudagraph_skips", "count",
    "times inductor ran a compiled function without CUDA graphs (compile-cudagraph-skipped)"};
inline constexpr Spec kCompileReplayGpuShare{"compile.replay_gpu_share", "ratio",
                                             "share of the recorded GPU time spent in replays of torch.compile's "
                                             "graphs (the rest: kernels launched one by one, other graphs)"};

// --shadow's comparisons (analysis/python_probe.cc)
inline constexpr Spec kShadowCallsCompared{
    "shadow.calls_compared", "count",
    "calls of graphed modules compared with their eager forward (--shadow; numerics-forward)"};
inline constexpr Spec kShadowReplaysCompared{
    "shadow.replays_compared", "count",
    "replays of the program's captures compared with their captured call run eagerly (replay-mismatch)"};
inline constexpr Spec kShadowBackwardsCompared{
    "shadow.backwards_compared", "count",
    "backwards of graphed modules whose parameters' gradients were compared with their eager backward's, and whose "
    ".grad was checked to be what the backward accumulated (--shadow; numerics-grad)"};
inline constexpr Spec kShadowCallsDrawing{
    "shadow.calls_drawing", "count",
    "of the calls, replays and backwards compared, those whose eager code drew random numbers (every source put "
    "back)"};
inline constexpr Spec kShadowCallsRandom{
    "shadow.calls_random", "count",
    "calls and replays not compared: the graph and its eager code advanced the CUDA generator by different amounts, so "
    "their random numbers cannot match (before format 1.8: every call that drew random numbers)"};
inline constexpr Spec kShadowTensorsCompared{"shadow.tensors_compared", "count",
                                             "outputs and written tensors of those calls compared element by element"};
inline constexpr Spec kShadowCostUs{"shadow.cost_us", "us",
                                    "host time a shadowed call or replay added, median: two eager runs, the restores "
                                    "and the comparison, which waits for the GPU"};

// `graphcheck check`: the engine's timings and graphs (engine/pipeline.cc) and the command's own
// (cli/check_command.cc)
inline constexpr Spec kCheckEagerStepUs{"check.eager_step_us", "us", "eager step, median (CUDA events)"};
inline constexpr Spec kCheckEagerStepUsP10{"check.eager_step_us_p10", "us", "eager step, 10th percentile"};
inline constexpr Spec kCheckEagerStepUsP90{"check.eager_step_us_p90", "us", "eager step, 90th percentile"};
inline constexpr Spec kCheckGraphedStepUs{"check.graphed_step_us", "us", "graphed step, median (CUDA events)"};
inline constexpr Spec kCheckGraphedStepUsP10{"check.graphed_step_us_p10", "us", "graphed step, 10th percentile"};
inline constexpr Spec kCheckGraphedStepUsP90{"check.graphed_step_us_p90", "us", "graphed step, 90th percentile"};
inline constexpr Spec kCheckSpeedup{"check.speedup", "ratio", "eager step time / graphed step time (medians)",
                                    Better::kHigher};
inline constexpr Spec kCheckEagerOutsideGraphableUs{
    "check.eager_outside_graphable_us", "us",
    "eager step less the host time of its forward and backward (the loss, the optimizer step): what stays eager when "
    "the forward and backward are graphed; median"};
inline constexpr Spec kCheckEagerRepeatLossSpread{
    "check.eager_repeat_loss_spread", "loss",
    "largest loss difference between the eager run and its repeat (0: bitwise equal)"};
inline constexpr Spec kCheckNumericsTensors{
    "check.numerics_tensors", "count",
    "tensors compared between eager and graphed (outputs, gradients, parameters, buffers)"};
inline constexpr Spec kCheckGraphs{"check.graphs", "count", "CUDA graphs captured"};
inline constexpr Spec kCheckGraphNodes{"check.graph_nodes", "count", "nodes in those graphs"};
inline constexpr Spec kCheckCaptureMs{"check.capture_ms", "ms", "capture and instantiation, wall time"};
inline constexpr Spec kCheckGraphPoolBytes{"check.graph_pool_bytes", "bytes",
                                           "memory the caching allocator holds for the graphs' pool"};
inline constexpr Spec kCheckTotalMs{"check.total_ms", "ms", "graphcheck check, wall time"};
inline constexpr Spec kCheckToolOverheadMs{
    "check.tool_overhead_ms", "ms",
    "graphcheck's own time outside the engine runs: static checks, trace analysis, report"};
inline constexpr Spec kCheckEngineStartupMs{
    "check.engine_startup_ms", "ms", "engine process time outside its steps: LibTorch and CUDA start, recorder, exit"};
inline constexpr Spec kCheckRecordedEagerStepUs{"check.recorded_eager_step_us", "us",
                                                "eager step, median, in the run whose launches were recorded"};
inline constexpr Spec kCheckRecorderPerturbationRatio{
    "check.recorder_perturbation_ratio", "ratio", "how much recording every launch lengthened the engine's eager step"};
inline constexpr Spec kCheckForecastGraphedUs{"check.forecast_graphed_us", "us",
                                              "the trace's forecast graphed step with check.eager_outside_graphable_us "
                                              "in place of launch.outside_graphable_us on its host path"};
inline constexpr Spec kCheckForecastSavingsUs{"check.forecast_savings_us", "us",
                                              "eager step timed by the engine - the trace's forecast graphed step",
                                              Better::kHigher};
inline constexpr Spec kCheckForecastErrorRatio{
    "check.forecast_error_ratio", "ratio",
    "(forecast graphed step - graphed step timed by the engine) / the timed one"};

// `graphcheck run`: how the program ended (cli/run_command.cc)
inline constexpr Spec kProgramExitCode{"program.exit_code", "code", "the program's own exit status"};
inline constexpr Spec kProgramSignal{"program.signal", "signal", "the signal that ended the program, 0 if none"};

// The metric named `name` in `metrics`, or null.
const Metric* FindIn(const std::vector<Metric>& metrics, absl::string_view name);

// Every spec above, in this order: generated from this file by core/CMakeLists.txt (core/metric_list.inc), so a
// new entry is never left out. `graphcheck list-metrics --format json` exports the catalogue for scripts.
const std::vector<const Spec*>& All();
// The spec of a metric's name (Metric::name), or of a name as a report writes it (Metric::ScopedName); null when
// none.
const Spec* Find(absl::string_view name);
// A name as a report writes it split into the catalogue's name and the scope: "pid852." (or a report's older
// "rank0."), a coverage share's ".ORIGIN", a job's ".min" / ".max". The one place a scoped name is read.
void SplitScopedName(absl::string_view scoped, std::string* name, MetricScope* scope);

}  // namespace graphcheck::metric

#endif  // GRAPHCHECK_CORE_METRICS_H_
