#include "analysis/report_timeline.h"

#include <algorithm>
#include <cmath>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "analysis/launch_metrics.h"
#include "analysis/trace_analysis.h"
#include "core/quantile.h"

namespace graphcheck::analysis {
namespace {

using trace::ApiCall;
using trace::ApiKind;

bool IsLaunch(const ApiCall& call) {
  return (call.kind == ApiKind::kKernelLaunch || call.kind == ApiKind::kGraphLaunch) &&
         call.capture_status == trace::CaptureStatus::kNone;
}

// The step of median time (core/quantile.h's rank), so that the drawn step is a typical one
// rather than the first (cold) or an outlier, and its time is the median the metrics report.
struct TimedStep {
  const Iteration* step = nullptr;
  double time_us = 0;
};
std::optional<TimedStep> MedianStep(const TraceAnalysis& analysis, const std::vector<Iteration>& steps) {
  if (steps.empty()) return std::nullopt;
  const std::vector<double> times = StepTimesUs(analysis, steps);
  std::vector<TimedStep> timed;
  for (size_t i = 0; i < steps.size(); ++i) timed.push_back({&steps[i], times[i]});
  const size_t rank = QuantileRank(timed.size(), 0.5);
  std::nth_element(timed.begin(), timed.begin() + rank, timed.end(),
                   [](const TimedStep& a, const TimedStep& b) { return a.time_us < b.time_us; });
  return timed[rank];
}

StepTimeline DrawStep(const trace::Trace& trace, const TimedStep& timed, absl::string_view kind,
                      const TimelineLimits& limits) {
  const Iteration& step = *timed.step;
  StepTimeline drawn;
  drawn.label = absl::StrCat(kind, " step ", step.index);
  // Kernels launched one by one share their launch's correlation id, and so do the kernels a graph launch replays.
  absl::flat_hash_set<uint32_t> launched;
  for (size_t i = step.first_call; i < step.end_call; ++i) {
    const ApiCall& call = trace.api_calls[i];
    if (!IsLaunch(call)) continue;
    launched.insert(call.correlation_id);
    if (drawn.launches.size() < limits.launches_per_step) {
      drawn.launches.push_back({(call.start_ns - step.start_ns) / 1e3, (call.end_ns - call.start_ns) / 1e3});
    } else {
      ++drawn.dropped_launches;
    }
  }
  uint64_t end_ns = step.end_ns;
  for (const trace::KernelActivity& kernel : trace.kernels) {
    if (kernel.start_ns < step.start_ns || !launched.contains(kernel.correlation_id)) continue;
    end_ns = std::max(end_ns, kernel.end_ns);
    if (drawn.kernels.size() < limits.kernels_per_step) {
      drawn.kernels.push_back({std::string(trace.String(trace.Shape(kernel).name)), kernel.stream_id,
                               (kernel.start_ns - step.start_ns) / 1e3, (kernel.end_ns - kernel.start_ns) / 1e3});
    } else {
      ++drawn.dropped_kernels;
    }
  }
  std::sort(drawn.kernels.begin(), drawn.kernels.end(),
            [](const TimelineKernel& a, const TimelineKernel& b) { return a.start_us < b.start_us; });
  drawn.duration_us = timed.time_us;
  drawn.extent_us = (end_ns - step.start_ns) / 1e3;
  return drawn;
}

// Buckets on the 1-2-5 sequence (0.5, 1, 2, 5, 10, ... us) from the shortest duration to the longest.
std::vector<HistogramBucket> Histogram(std::vector<double> durations_us) {
  std::vector<HistogramBucket> buckets;
  if (durations_us.empty()) return buckets;
  std::sort(durations_us.begin(), durations_us.end());
  auto edge = [](int i) {  // i-th edge of the sequence, edge(0) = 1 us
    static constexpr double kMantissa[] = {1, 2, 5};
    const int decade = i >= 0 ? i / 3 : -((-i + 2) / 3);
    return kMantissa[i - 3 * decade] * std::pow(10.0, decade);
  };
  int i = 0;
  while (edge(i) > durations_us.front() && i > -12) --i;
  while (edge(i + 1) <= durations_us.front()) ++i;
  size_t next = 0;
  while (next < durations_us.size()) {
    HistogramBucket bucket{edge(i), edge(i + 1), 0};
    while (next < durations_us.size() && durations_us[next] < bucket.upper_us) {
      ++bucket.count;
      ++next;
    }
    buckets.push_back(bucket);
    ++i;
  }
  return buckets;
}

std::vector<double> KernelDurations(const TraceAnalysis& analysis, const std::vector<Iteration>& steps) {
  const trace::Trace& trace = analysis.trace();
  std::vector<double> durations;
  for (const Iteration& step : steps) {
    for (size_t i = step.first_call; i < step.end_call; ++i) {
      const ApiCall& call = trace.api_calls[i];
      if (call.kind != ApiKind::kKernelLaunch || call.capture_status != trace::CaptureStatus::kNone) continue;
      const int64_t k = analysis.kernel_by_correlation().Find(call.correlation_id);
      if (k >= 0) durations.push_back((trace.kernels[k].end_ns - trace.kernels[k].start_ns) / 1e3);
    }
  }
  return durations;
}

}  // namespace

std::optional<Timeline> BuildTimeline(const TraceAnalysis& analysis, const IterationOptions& iterations,
                                      const TimelineLimits& limits) {
  const trace::Trace& trace = analysis.trace();
  IterationOptions every_step = iterations;
  every_step.first = 0;
  every_step.last.reset();
  const Iterations& all = analysis.iterations(every_step);
  const Iterations& selected = analysis.iterations(iterations);

  struct Span {
    const char* phase;
    uint64_t start_ns;
    double duration_us;  // steps: their time as the step metrics take it; captures: their host span
  };
  std::vector<Span> spans;
  const std::vector<double> eager_us = StepTimesUs(analysis, all.eager);
  for (size_t i = 0; i < all.eager.size(); ++i) {
    const Iteration& step = all.eager[i];
    const bool in_range = step.index >= iterations.first && (!iterations.last || step.index < *iterations.last);
    spans.push_back({in_range ? "eager" : "warmup", step.start_ns, eager_us[i]});
  }
  const std::vector<double> graphed_us = StepTimesUs(analysis, all.graphed);
  for (size_t i = 0; i < all.graphed.size(); ++i) spans.push_back({"graphed", all.graphed[i].start_ns, graphed_us[i]});
  for (const CaptureWindow& window : analysis.captures().windows()) {
    if (!window.end_call) continue;
    const uint64_t start_ns = trace.api_calls[window.begin_call].start_ns;
    spans.push_back({"capture", start_ns, (trace.api_calls[*window.end_call].end_ns - start_ns) / 1e3});
  }
  if (spans.empty()) return std::nullopt;
  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) { return a.start_ns < b.start_ns; });

  Timeline timeline;
  timeline.process =
      trace.process.rank >= 0 ? absl::StrCat("rank ", trace.process.rank) : absl::StrCat("pid ", trace.process.pid);
  const uint64_t origin = spans.front().start_ns;
  for (const Span& span : spans) {
    if (timeline.run.size() == limits.run_steps) {
      ++timeline.dropped_run_steps;
      continue;
    }
    timeline.run.push_back({span.phase, (span.start_ns - origin) / 1e3, span.duration_us});
  }
  const std::vector<Iteration> eager = LaunchRecorded(selected.eager);
  if (std::optional<TimedStep> step = MedianStep(analysis, eager)) {
    timeline.eager_step = DrawStep(trace, *step, "eager", limits);
  }
  const std::vector<Iteration> graphed = LaunchRecorded(selected.graphed);
  if (std::optional<TimedStep> step = MedianStep(analysis, graphed)) {
    timeline.graphed_step = DrawStep(trace, *step, "graphed", limits);
  }
  timeline.kernel_durations = Histogram(KernelDurations(analysis, eager));
  return timeline;
}

}  // namespace graphcheck::analysis
