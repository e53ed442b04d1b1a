#include "analysis/launch_metrics.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "analysis/trace_analysis.h"
#include "core/metrics.h"
#include "core/plural.h"
#include "core/quantile.h"
#include "trace/api_names.h"

namespace graphcheck::analysis {
namespace {

using trace::ApiCall;
using trace::ApiKind;

struct Interval {
  uint64_t start;
  uint64_t end;
};

class StepAccumulator {
 public:
  StepAccumulator(const TraceAnalysis& analysis, const LaunchModel& model)
      : trace_(analysis.trace()), kernels_(analysis.kernel_by_correlation()), model_(model) {
    for (uint32_t g = 0; g < trace_.graph_launches.size(); ++g) {
      graphs_.emplace(trace_.graph_launches[g].correlation_id, g);
    }
    // A replay's kernels carry its cudaGraphLaunch's correlation id and a graph id.
    for (const trace::KernelActivity& kernel : trace_.kernels) {
      if (kernel.graph_id != 0) ++replayed_kernels_[kernel.correlation_id];
    }
    if (!model.graphable_range.empty()) parts_ = analysis.nvtx().RangesNamed(model.graphable_range);
  }

  void Add(const Iteration& step) {
    intervals_.clear();
    part_intervals_.clear();
    StepStats& figures = per_step_.emplace_back();  // this step's; a reference only until the next step
    const std::vector<TimeInterval> parts = PartsOf(step);
    double delay_ns = 0;
    size_t delays = 0;
    size_t part_nodes = 0;
    uint64_t first_launch = ~uint64_t{0}, last_launch = 0;  // the host span of the step's launching
    for (size_t i = step.first_call; i < step.end_call; ++i) {
      const ApiCall& call = trace_.api_calls[i];
      if (call.capture_status != trace::CaptureStatus::kNone || trace_.Detail(call).return_code != 0) continue;
      const bool in_part = parts.empty() || InAny(parts, call);
      if (trace::IsGpuOperation(call.kind)) {
        first_launch = std::min(first_launch, call.start_ns);
        last_launch = std::max(last_launch, call.end_ns);
      }
      switch (call.kind) {
        case ApiKind::kKernelLaunch: {
          figures.kernels += 1;
          figures.nodes += 1;
          part_nodes += in_part;
          figures.cpu_launch_us += (call.end_ns - call.start_ns) / 1e3;
          figures.kernel_launch_us += (call.end_ns - call.start_ns) / 1e3;
          const int64_t k = kernels_.Find(call.correlation_id);
          if (k < 0) break;
          const trace::KernelActivity& kernel = trace_.kernels[k];
          intervals_.push_back({kernel.start_ns, kernel.end_ns});
          if (in_part && !parts.empty()) part_intervals_.push_back({kernel.start_ns, kernel.end_ns});
          if (kernel.start_ns >= call.start_ns) {
            delay_ns += kernel.start_ns - call.start_ns;
            ++delays;
          }
          if ((kernel.end_ns - kernel.start_ns) / 1e3 < model_.short_kernel_us) figures.short_kernels += 1;
          break;
        }
        case ApiKind::kMemcpy:
        case ApiKind::kMemcpyAsync:
        case ApiKind::kMemset:
        case ApiKind::kMemsetAsync:
          figures.nodes += 1;
          part_nodes += in_part;
          break;
        case ApiKind::kGraphLaunch: {
          figures.graph_launches += 1;
          figures.cpu_launch_us += (call.end_ns - call.start_ns) / 1e3;
          if (auto it = graphs_.find(call.correlation_id); it != graphs_.end()) {
            const trace::GraphLaunchActivity& graph = trace_.graph_launches[it->second];
            intervals_.push_back({graph.start_ns, graph.end_ns});
          }
          if (auto it = replayed_kernels_.find(call.correlation_id); it != replayed_kernels_.end()) {
            figures.replayed_kernels += it->second;
          }
          break;
        }
        default:
          break;
      }
    }
    const Union all = UnionOf(&intervals_);
    const double step_us = std::max<uint64_t>(step.end_ns - step.start_ns, all.span) / 1e3;
    figures.step_us += step_us;
    const double launching_us = last_launch > first_launch ? (last_launch - first_launch) / 1e3 : 0;
    figures.outside_launching_us += std::max(0.0, (step.end_ns - step.start_ns) / 1e3 - launching_us);
    figures.gpu_busy_us += all.busy / 1e3;
    if (parts.empty()) {
      figures.graphable_parts += 1;
      figures.graphable_nodes += part_nodes;
      figures.graphable_gpu_busy_us += all.busy / 1e3;
    } else {
      // Each part takes its host span or its kernels' GPU span, whichever is longer; the rest of the step stays.
      const Union in_parts = UnionOf(&part_intervals_);
      uint64_t parts_host = 0;
      for (const TimeInterval& part : parts) parts_host += part.end_ns - part.start_ns;
      figures.graphable_parts += parts.size();
      figures.graphable_nodes += part_nodes;
      figures.graphable_gpu_busy_us += in_parts.busy / 1e3;
      figures.graphable_gpu_span_us += in_parts.span / 1e3;
      figures.outside_graphable_us += std::max(0.0, step_us - std::max(parts_host, in_parts.span) / 1e3);
      figures.outside_gpu_busy_us += (all.busy - std::min(all.busy, in_parts.busy)) / 1e3;
    }
    figures.gpu_idle_us += std::max(0.0, step_us - all.busy / 1e3);
    delay_sum_us_ += delay_ns / 1e3;
    delay_count_ += delays;
    figures.steps = 1;
  }

  // The graphable ranges inside `step` (none: the whole step is graphable); parts_ is sorted by start.
  std::vector<TimeInterval> PartsOf(const Iteration& step) const {
    std::vector<TimeInterval> inside;
    auto it = std::lower_bound(parts_.begin(), parts_.end(), step.start_ns,
                               [](const TimeInterval& part, uint64_t t) { return part.start_ns < t; });
    for (; it != parts_.end() && it->start_ns < step.end_ns; ++it) {
      if (it->end_ns <= step.end_ns) inside.push_back(*it);
    }
    return inside;
  }

  // Per field, the median over the steps: one slow step (a page fault, a host stall: 66 ms among 3 ms steps on an
  // H100) moves a mean far from every step, and the report's headline times are medians too. The step time's 10th
  // and 90th percentiles give the spread.
  const std::vector<StepStats>& per_step() const { return per_step_; }

  StepStats Median() const {
    StepStats median;
    median.steps = per_step_.size();
    if (per_step_.empty()) return median;
    for (double StepStats::*field :
         {&StepStats::step_us, &StepStats::kernels, &StepStats::graph_launches, &StepStats::nodes,
          &StepStats::replayed_kernels, &StepStats::gpu_busy_us, &StepStats::gpu_idle_us, &StepStats::cpu_launch_us,
          &StepStats::short_kernels, &StepStats::graphable_parts, &StepStats::graphable_nodes,
          &StepStats::graphable_gpu_busy_us, &StepStats::graphable_gpu_span_us, &StepStats::outside_graphable_us,
          &StepStats::outside_gpu_busy_us, &StepStats::outside_launching_us, &StepStats::kernel_launch_us}) {
      std::vector<double> values;
      values.reserve(per_step_.size());
      for (const StepStats& step : per_step_) values.push_back(step.*field);
      median.*field = Quantile(std::move(values), 0.5);
    }
    std::vector<double> step_times;
    for (const StepStats& step : per_step_) step_times.push_back(step.step_us);
    median.step_us_p10 = Quantile(step_times, 0.1);
    median.step_us_p90 = Quantile(std::move(step_times), 0.9);
    median.launch_delay_us = delay_count_ == 0 ? 0 : delay_sum_us_ / delay_count_;
    return median;
  }

 private:
  struct Union {
    uint64_t busy = 0;  // covered time
    uint64_t span = 0;  // first start to last end
  };
  static Union UnionOf(std::vector<Interval>* intervals) {
    std::sort(intervals->begin(), intervals->end(),
              [](const Interval& a, const Interval& b) { return a.start < b.start; });
    Union u;
    uint64_t covered_to = 0;
    for (const Interval& interval : *intervals) {
      const uint64_t from = std::max(interval.start, covered_to);
      if (interval.end > from) u.busy += interval.end - from;
      covered_to = std::max(covered_to, interval.end);
    }
    if (!intervals->empty()) u.span = covered_to - intervals->front().start;
    return u;
  }
  // By time on any thread: autograd runs a CUDA backward on its own device threads, while the range that marks it
  // is on the thread that called backward() (seen on an H100: ResNet-18's backward kernels all launched elsewhere).
  static bool InAny(const std::vector<TimeInterval>& parts, const ApiCall& call) {
    return std::any_of(parts.begin(), parts.end(),
                       [&](const TimeInterval& p) { return call.start_ns >= p.start_ns && call.start_ns < p.end_ns; });
  }

  const trace::Trace& trace_;
  const CorrelationIndex& kernels_;
  const LaunchModel& model_;
  absl::flat_hash_map<uint64_t, uint32_t> graphs_;            // correlation id -> graph launch activity
  absl::flat_hash_map<uint64_t, uint32_t> replayed_kernels_;  // graph launch correlation id -> kernels it ran
  std::vector<Interval> intervals_;
  std::vector<Interval> part_intervals_;
  std::vector<TimeInterval> parts_;  // every graphable range of the trace, by start
  std::vector<StepStats> per_step_;  // one per step added, each with steps = 1
  double delay_sum_us_ = 0;
  size_t delay_count_ = 0;
};

}  // namespace

std::vector<StepStats> PerStepStats(const TraceAnalysis& analysis, const std::vector<Iteration>& steps,
                                    const LaunchModel& model) {
  StepAccumulator accumulator(analysis, model);
  for (const Iteration& step : steps) accumulator.Add(step);
  return accumulator.per_step();
}

std::vector<double> StepTimesUs(const TraceAnalysis& analysis, const std::vector<Iteration>& steps) {
  std::vector<double> times;
  times.reserve(steps.size());
  for (const StepStats& step : PerStepStats(analysis, steps, LaunchModel())) times.push_back(step.step_us);
  return times;
}

LaunchStats ComputeLaunchStats(const TraceAnalysis& analysis, const IterationOptions& iterations,
                               const LaunchModel& model) {
  const Iterations& steps = analysis.iterations(iterations);
  LaunchStats stats;
  stats.source = steps.source;
  StepAccumulator eager(analysis, model);
  for (const Iteration& step : LaunchRecorded(steps.eager)) eager.Add(step);
  StepAccumulator graphed(analysis, model);
  for (const Iteration& step : LaunchRecorded(steps.graphed)) graphed.Add(step);
  stats.eager = eager.Median();
  stats.graphed = graphed.Median();
  stats.graphed_steps = stats.graphed.steps;
  stats.graphed_step_us = stats.graphed.step_us;
  stats.graphed_step_us_p10 = stats.graphed.step_us_p10;
  stats.graphed_step_us_p90 = stats.graphed.step_us_p90;
  if (std::any_of(steps.graphed.begin(), steps.graphed.end(),
                  [](const Iteration& step) { return !step.launches_recorded; })) {
    std::vector<double> graphed_us;
    for (const Iteration& step : steps.graphed) graphed_us.push_back((step.end_ns - step.start_ns) / 1e3);
    stats.graphed_steps = graphed_us.size();
    stats.graphed_step_us = std::max(Quantile(graphed_us, 0.5), stats.graphed.gpu_busy_us);
    stats.graphed_step_us_p10 = Quantile(graphed_us, 0.1);
    stats.graphed_step_us_p90 = Quantile(std::move(graphed_us), 0.9);
  }
  std::vector<double> unperturbed_us, outside_us;
  for (const Iteration& step : steps.eager) {
    if (analysis.trace().LaunchRecordingOverlaps(step.start_ns, step.end_ns)) continue;
    unperturbed_us.push_back((step.end_ns - step.start_ns) / 1e3);
    const std::vector<TimeInterval> parts = eager.PartsOf(step);
    if (parts.empty() || stats.eager.graphable_gpu_span_us == 0) continue;
    uint64_t parts_host = 0;
    for (const TimeInterval& part : parts) parts_host += part.end_ns - part.start_ns;
    const double parts_ns = std::max(static_cast<double>(parts_host), stats.eager.graphable_gpu_span_us * 1e3);
    outside_us.push_back(std::max(0.0, static_cast<double>(step.end_ns - step.start_ns) - parts_ns) / 1e3);
  }
  stats.unperturbed_steps = unperturbed_us.size();
  stats.unperturbed_step_us = Quantile(unperturbed_us, 0.5);
  stats.unperturbed_step_us_p10 = Quantile(unperturbed_us, 0.1);
  stats.unperturbed_step_us_p90 = Quantile(std::move(unperturbed_us), 0.9);
  stats.step_time_unperturbed = stats.unperturbed_steps >= model.min_forecast_steps;
  stats.outside_graphable_unperturbed = stats.step_time_unperturbed && outside_us.size() == stats.unperturbed_steps;
  stats.outside_graphable_us =
      stats.outside_graphable_unperturbed ? Quantile(std::move(outside_us), 0.5) : stats.eager.outside_graphable_us;
  stats.eager_step_us =
      stats.step_time_unperturbed ? std::max(stats.unperturbed_step_us, stats.eager.gpu_busy_us) : stats.eager.step_us;
  // The forecast needs GPU busy times (kernel activity) and enough steps past the program's first-call work.
  stats.forecast = stats.eager.steps >= model.min_forecast_steps && stats.eager.gpu_busy_us > 0;
  if (stats.forecast) {
    const StepStats& e = stats.eager;
    const double launches_us = model.graph_launch_us * e.graphable_parts;
    // What stays on the host: the time outside the graphable ranges the program marked, else the host time outside
    // the step's launching (loading the next batch, logging, I/O), its share of the recorded steps applied to the
    // step time the forecast uses.
    const double outside_us = e.graphable_gpu_span_us > 0 ? stats.outside_graphable_us
                              : e.step_us > 0             ? stats.eager_step_us * e.outside_launching_us / e.step_us
                                                          : 0;
    stats.forecast_host_path_us = outside_us + launches_us;
    stats.forecast_gpu_path_us =
        e.graphable_gpu_busy_us + model.graph_node_us * e.graphable_nodes + launches_us + e.outside_gpu_busy_us;
    stats.forecast_graphed_us = std::max(stats.forecast_host_path_us, stats.forecast_gpu_path_us);
    stats.forecast_savings_us = std::max(0.0, stats.eager_step_us - stats.forecast_graphed_us);
    stats.forecast_savings_ratio = stats.eager_step_us > 0 ? stats.forecast_savings_us / stats.eager_step_us : 0;
  }
  return stats;
}

std::string LaunchStats::StepTimeSource() const {
  return step_time_unperturbed
             ? absl::StrCat(Plural(unperturbed_steps, "eager step", "eager steps"), " outside launch recording (",
                            source, ")")
             : absl::StrCat(Plural(eager.steps, "eager step", "eager steps"), " with launches recorded (", source, ")");
}

std::vector<Metric> LaunchMetrics(const LaunchStats& stats) {
  std::vector<Metric> metrics;
  const StepStats& e = stats.eager;
  const StepStats& g = stats.graphed;
  if (e.steps > 0) {
    metrics = {
        metric::kLaunchIterations.With(static_cast<double>(e.steps),
                                       "eager steps with launches recorded (" + stats.source + ")"),
        metric::kLaunchIterationUs.With(stats.eager_step_us,
                                        "eager step time the forecast uses, median, from " + stats.StepTimeSource()),
        metric::kLaunchIterationUsP10.With(stats.step_time_unperturbed ? stats.unperturbed_step_us_p10 : e.step_us_p10),
        metric::kLaunchIterationUsP90.With(stats.step_time_unperturbed ? stats.unperturbed_step_us_p90 : e.step_us_p90),
        metric::kLaunchKernelsPerIteration.With(e.kernels),
        metric::kLaunchCpuLaunchUs.With(e.cpu_launch_us),
    };
    if (stats.step_time_unperturbed) {
      metrics.push_back(metric::kLaunchUnperturbedIterations.With(static_cast<double>(stats.unperturbed_steps)));
      metrics.push_back(metric::kLaunchRecordedIterationUs.With(e.step_us));
      // Against the step time the forecast uses: a GPU-bound step's host span is short (the host runs ahead), and the
      // recorded step's time is the GPU's then (H100: 44 ms against 0.1 ms).
      metrics.push_back(metric::kLaunchRecorderPerturbationRatio.With(
          stats.eager_step_us > 0 ? e.step_us / stats.eager_step_us - 1 : 0));
    }
  }
  // GPU-side figures need kernel activity records; a trace without them gets no forecast rather than a wrong one.
  if (e.steps > 0 && e.gpu_busy_us > 0) {
    const std::vector<Metric> gpu = {
        metric::kLaunchGpuBusyUs.With(e.gpu_busy_us),
        metric::kLaunchGpuIdleUs.With(e.gpu_idle_us),
        metric::kLaunchGpuUtilization.With(e.gpu_busy_us / e.step_us),
        metric::kLaunchLaunchDelayUs.With(e.launch_delay_us),
        metric::kLaunchShortKernelsPerIteration.With(e.short_kernels),
    };
    metrics.insert(metrics.end(), gpu.begin(), gpu.end());
  }
  if (stats.forecast) {
    const std::vector<Metric> forecast = {
        metric::kLaunchForecastGraphedUs.With(stats.forecast_graphed_us),
        metric::kLaunchForecastSavingsUs.With(stats.forecast_savings_us),
        metric::kLaunchForecastSavingsRatio.With(stats.forecast_savings_ratio),
    };
    metrics.insert(metrics.end(), forecast.begin(), forecast.end());
    if (stats.outside_graphable_us > 0) {
      metrics.push_back(metric::kLaunchOutsideGraphableUs.With(
          stats.outside_graphable_us,
          absl::StrCat("step time outside its graphcheck:graphable ranges (loss, optimizer, host "
                       "work): stays eager; from the ",
                       stats.outside_graphable_unperturbed ? "steps outside launch recording"
                                                           : "steps with launches recorded")));
      metrics.push_back(metric::kLaunchForecastHostPathUs.With(stats.forecast_host_path_us));
      metrics.push_back(metric::kLaunchForecastGpuPathUs.With(stats.forecast_gpu_path_us));
    }
  }
  if (stats.graphed_steps > 0) {
    metrics.push_back(metric::kGraphedIterations.With(static_cast<double>(stats.graphed_steps)));
    metrics.push_back(metric::kGraphedIterationUs.With(stats.graphed_step_us));
    metrics.push_back(metric::kGraphedIterationUsP10.With(stats.graphed_step_us_p10));
    metrics.push_back(metric::kGraphedIterationUsP90.With(stats.graphed_step_us_p90));
  }
  if (g.steps > 0) {
    metrics.push_back(metric::kGraphedGraphLaunchesPerIteration.With(g.graph_launches));
    metrics.push_back(metric::kGraphedGpuBusyUs.With(g.gpu_busy_us));
  }
  const double graphed_us = stats.graphed_step_us;
  if (e.steps > 0 && stats.graphed_steps > 0 && graphed_us > 0) {
    metrics.push_back(metric::kGraphedSpeedup.With(stats.eager_step_us / graphed_us));
    // The forecast error needs a forecast.
    if (stats.forecast) {
      metrics.push_back(metric::kGraphedForecastErrorRatio.With((stats.forecast_graphed_us - graphed_us) / graphed_us));
    }
  }
  return metrics;
}

void UseEngineTimesForTheForecast(std::vector<Metric>* metrics) {
  metrics->erase(std::remove_if(metrics->begin(), metrics->end(),
                                [](const Metric& m) {
                                  return m.name == metric::kGraphedSpeedup.name ||
                                         m.name == metric::kGraphedForecastErrorRatio.name;
                                }),
                 metrics->end());
  auto find = [&](absl::string_view name) { return metric::FindIn(*metrics, name); };
  const Metric* forecast = find(metric::kLaunchForecastGraphedUs.name);
  if (forecast == nullptr) return;
  double forecast_us = forecast->value;
  std::vector<Metric> added;
  // What stays eager (loss, optimizer), timed without the recorder, in place of the trace's recorded figure: it is
  // the host path's (launch.forecast_graphed_us is the longer of the host and the GPU path).
  const Metric* trace_outside = find(metric::kLaunchOutsideGraphableUs.name);
  const Metric* engine_outside = find(metric::kCheckEagerOutsideGraphableUs.name);
  const Metric* host_path = find(metric::kLaunchForecastHostPathUs.name);
  const Metric* gpu_path = find(metric::kLaunchForecastGpuPathUs.name);
  if (trace_outside != nullptr && engine_outside != nullptr && host_path != nullptr && gpu_path != nullptr) {
    forecast_us = std::max(host_path->value - trace_outside->value + engine_outside->value, gpu_path->value);
    added.push_back(metric::kCheckForecastGraphedUs.With(forecast_us));
  }
  if (const Metric* eager = find(metric::kCheckEagerStepUs.name)) {
    added.push_back(metric::kCheckForecastSavingsUs.With(std::max(0.0, eager->value - forecast_us)));
  }
  if (const Metric* graphed = find(metric::kCheckGraphedStepUs.name); graphed != nullptr && graphed->value > 0) {
    added.push_back(metric::kCheckForecastErrorRatio.With((forecast_us - graphed->value) / graphed->value));
  }
  metrics->insert(metrics->end(), added.begin(), added.end());
}

}  // namespace graphcheck::analysis
