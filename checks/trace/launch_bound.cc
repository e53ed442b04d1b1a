// launch-bound: the eager steps spend so much time launching (GPU idle between short kernels) that CUDA graphs would
// save more than `min-savings` of the step time, by the forecast in launch_metrics.h (which keeps the host's work
// outside the launching: data loading, logging). The finding says what graphs would give and cost: the time saved,
// and the memory the graph's private pool would hold (memory_forecast.h, from the allocator's history of a Python
// program). Graphed steps that still launch kernels one by one are told about that remainder.
#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analysis/launch_metrics.h"
#include "analysis/memory_forecast.h"
#include "analysis/trace_analysis.h"
#include "checks/checks.h"
#include "checks/trace/launch_model_options.h"
#include "core/check_ids.h"
#include "core/plural.h"

namespace graphcheck::checks {

using analysis::ComputeLaunchStats;
using analysis::ForecastGraphMemory;
using analysis::IterationOptions;
using analysis::LaunchModel;
using analysis::LaunchStats;
using analysis::MemoryForecast;
using analysis::MibText;
using analysis::StepStats;
using analysis::TraceAnalysis;

namespace {

CheckInfo LaunchBoundInfo() {
  // The model's options (launch_model_options.h), their defaults the model's own values; the check reads the model
  // from the analysis' settings, and only min-savings as its own.
  const LaunchModel model;
  return CheckInfo{
      check_id::kLaunchBound,
      "The step is launch-bound: CUDA graphs would save time",
      Severity::kNote,
      CheckArea::kPerformance,
      "Forecast from the eager steps: the GPU waits for the host between kernels, and replaying the step as a CUDA "
      "graph would save at least min-savings of the step time.",
      {
          {"graph-launch-us", absl::StrCat(model.graph_launch_us), "forecast: cost of one graph launch, microseconds",
           0, 1e6},
          {"graph-node-us", absl::StrCat(model.graph_node_us),
           "forecast: cost per graph node (kernel, copy, memset), microseconds", 0, 1e6},
          {"short-kernel-us", absl::StrCat(model.short_kernel_us),
           "kernels shorter than this count as short, microseconds", 0, 1e9},
          {"min-steps", absl::StrCat(model.min_forecast_steps),
           "forecast only from at least this many eager steps (after the step range)", 1, 1e9},
          {"min-savings", "0.2", "report when the forecast saving is at least this share of the step", 0, 1},
      }};
}

// The memory line of the forecast: what the graph's private pool would hold.
std::string MemoryEvidence(const MemoryForecast& memory) {
  const bool parts = memory.parts >= 2;
  std::string held = absl::StrFormat(
      "%s for the %s own allocations (they peak at %s live; %s of them are still held at its end: outputs and "
      "gradients)",
      MibText(memory.pool.pool_bytes), parts ? "ranges'" : "step's", MibText(memory.pool.live_peak_bytes),
      MibText(memory.pool.outliving_bytes));
  if (memory.workspace_bytes > 0) {
    absl::StrAppend(&held, " and ", MibText(memory.workspace_bytes),
                    " of cuBLAS workspaces, which the first graph captured on a stream allocates in its pool");
  }
  const std::string source = absl::StrCat("forecast from the caching allocator's history of ",
                                          Plural(memory.steps, "eager step", "eager steps"));
  if (parts) {
    return absl::StrFormat(
        "memory: the step's %zu graphable ranges, graphed into one shared pool, would hold about %s: %s; each in its "
        "own pool, %s in all; %s",
        memory.parts, MibText(memory.PoolBytes()), held, MibText(memory.PrivatePoolsBytes()), source);
  }
  return absl::StrFormat("memory: a graph of the step would hold a private pool of about %s: %s; %s",
                         MibText(memory.PoolBytes()), held, source);
}

class LaunchBoundCheck : public CheckOf<TraceAnalysis> {
 public:
  LaunchBoundCheck() : CheckOf(LaunchBoundInfo()) {}

 private:
  void ReportEagerRemainder(const TraceAnalysis& analysis, const LaunchStats& stats, const BoundOptions& options,
                            std::vector<Finding>* findings) const {
    const StepStats& g = stats.graphed;
    if (g.step_us <= 0 || g.kernel_launch_us / g.step_us < options.GetDouble("min-savings")) return;
    Finding finding = NewFinding();
    finding.title = "Graphed steps still launch kernels one by one";
    if (analysis.trace().process.pid != 0) finding.where.pid = analysis.trace().process.pid;
    finding.where.nvtx_path = analysis.settings().steps.region;
    finding.message = absl::StrFormat(
        "The program replays CUDA graphs, but each graphed step still launches %.0f kernels one by one: %.1f us of "
        "its %.1f us go to launch calls, which graphing that remainder would save.",
        g.kernels, g.kernel_launch_us, g.step_us);
    finding.evidence = {absl::StrFormat("%s from %s; %.1f graph launches per step",
                                        Plural(g.steps, "graphed step", "graphed steps"), stats.source,
                                        g.graph_launches)};
    finding.fix =
        "Capture the eager remainder too (the loss, the optimizer step, gradient clipping: a capturable optimizer "
        "and whole-step capture), or move it out of the loop.";
    findings->push_back(std::move(finding));
  }

 protected:
  void Read(const TraceAnalysis& analysis, const BoundOptions& options, std::vector<Finding>* findings) const override {
    const IterationOptions& steps = analysis.settings().steps;
    const LaunchModel& model = analysis.settings().launch;
    const LaunchStats stats = ComputeLaunchStats(analysis, steps, model);
    // Steps that already replay graphs: what graphs would save there is the eager work they still launch. (Their
    // warmup and capture iterations are not eager steps: iterations.h.)
    if (stats.graphed.steps > 0) ReportEagerRemainder(analysis, stats, options, findings);
    // Without kernel activity (a trace recorded without GPU timing) there is nothing to forecast from; with too few
    // steps the forecast would rest on the program's first-call work, so the finding says that instead.
    if (!stats.forecast && stats.eager.steps > 0 && stats.eager.gpu_busy_us > 0) {
      Finding finding = NewFinding();
      finding.title = "Too few steps to forecast what CUDA graphs would save";
      if (analysis.trace().process.pid != 0) finding.where.pid = analysis.trace().process.pid;
      finding.message = absl::StrFormat(
          "Only %s recorded after the first: too few to forecast what CUDA graphs would save (min-steps %s); the "
          "first steps of a program are dominated by its one-time start-up work.",
          Plural(stats.eager.steps, "eager step was", "eager steps were"), options.Get("min-steps"));
      finding.evidence = {absl::StrCat(Plural(stats.eager.steps, "step", "steps"), " from ", stats.source)};
      finding.fix = "Record more steps of the loop (or pass --check-option launch-bound.min-steps=N to accept fewer).";
      findings->push_back(std::move(finding));
      return;
    }
    if (!stats.forecast || stats.forecast_savings_ratio < options.GetDouble("min-savings")) return;
    Finding finding = NewFinding();
    if (analysis.trace().process.pid != 0) finding.where.pid = analysis.trace().process.pid;
    finding.where.nvtx_path = analysis.settings().steps.region;
    finding.message = absl::StrFormat(
        "The eager step is launch-bound: %.1f us per step (median), of which the GPU is busy %.1f us. Graphed, it is "
        "forecast at %.1f us, a saving of %.0f%%.",
        stats.eager_step_us, stats.eager.gpu_busy_us, stats.forecast_graphed_us, 100 * stats.forecast_savings_ratio);
    const bool unperturbed = stats.step_time_unperturbed;
    finding.evidence = {
        absl::StrFormat("step time from %s, 10th-90th percentile %.1f-%.1f us; kernels and GPU times (medians) from "
                        "%s with launches recorded",
                        stats.StepTimeSource(), unperturbed ? stats.unperturbed_step_us_p10 : stats.eager.step_us_p10,
                        unperturbed ? stats.unperturbed_step_us_p90 : stats.eager.step_us_p90,
                        Plural(stats.eager.steps, "step", "steps")),
        absl::StrFormat("%.0f kernels per step, %.0f shorter than %g us", stats.eager.kernels,
                        stats.eager.short_kernels, options.GetDouble("short-kernel-us")),
        absl::StrFormat("GPU utilization %.0f%%, idle %.1f us per step",
                        100 * stats.eager.gpu_busy_us / stats.eager_step_us,
                        std::max(0.0, stats.eager_step_us - stats.eager.gpu_busy_us)),
        absl::StrFormat("host time in launch calls %.1f us per step; mean launch delay %.1f us",
                        stats.eager.cpu_launch_us, stats.eager.launch_delay_us),
    };
    if (stats.step_time_unperturbed) {
      finding.evidence.push_back(absl::StrFormat(
          "recording launches lengthened the step by %.0f%% (%.1f us recorded, %.1f us without)",
          100 * (stats.eager.step_us / stats.unperturbed_step_us - 1), stats.eager.step_us, stats.unperturbed_step_us));
    }
    if (const std::optional<MemoryForecast> memory = ForecastGraphMemory(analysis, steps, model)) {
      finding.evidence.push_back(MemoryEvidence(*memory));
    }
    finding.fix =
        "Capture the step into a CUDA graph (torch.cuda.graph, torch.cuda.make_graphed_callables, Transformer "
        "Engine's make_graphed_callables, or torch.compile(mode='reduce-overhead')), after fixing what the capture "
        "checks report.";
    findings->push_back(std::move(finding));
  }
};

}  // namespace

std::unique_ptr<Check> NewLaunchBoundCheck() { return std::make_unique<LaunchBoundCheck>(); }

LaunchModel LaunchModelFromOptions(const CheckOptions& options) {
  const CheckInfo info = LaunchBoundInfo();
  const BoundOptions bound(info, options);
  LaunchModel model;
  model.graph_launch_us = bound.GetDouble("graph-launch-us");
  model.graph_node_us = bound.GetDouble("graph-node-us");
  model.short_kernel_us = bound.GetDouble("short-kernel-us");
  model.min_forecast_steps = static_cast<size_t>(bound.GetDouble("min-steps"));
  return model;
}

}  // namespace graphcheck::checks
