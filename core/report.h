// The report: everything one graphcheck invocation found and measured. Renderers in report/ turn it into text,
// JSON, JUnit XML, SARIF, Markdown and HTML; the JSON form is the saved, versioned one (docs/report-schema.md).
#ifndef GRAPHCHECK_CORE_REPORT_H_
#define GRAPHCHECK_CORE_REPORT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "core/environment.h"
#include "core/finding.h"
#include "core/numerics_sample.h"

namespace graphcheck {

struct Machine {
  std::string hostname;
  std::optional<GpuInfo> gpu;  // absent when no GPU was seen (lint, analyze on a CPU machine)
};

enum class StepStatus { kOk, kFailed, kSkipped };
absl::string_view StepStatusName(StepStatus status);  // "ok", "failed", "skipped"

// One named stage of a run: "eager-reference", "warmup", "forward-capture", "lint-config", ...
struct Step {
  std::string name;
  StepStatus status = StepStatus::kOk;
  double duration_ms = 0;
  std::string message;  // why it failed or was skipped

  bool operator==(const Step& o) const {
    return name == o.name && status == o.status && duration_ms == o.duration_ms && message == o.message;
  }
};

// The part of a run a metric's value covers, where it is not the whole run: set where the metric is made, spelled into
// its name only where a report is written (Metric::ScopedName) and split off again where one is read
// (core/metrics.h: SplitScopedName).
struct MetricScope {
  enum class Extreme : uint8_t { kNone, kMin, kMax };
  uint32_t pid = 0;                  // one process of several without ranks: "pid<P>.NAME"
  std::string origin;                // one maker of graphs (the coverage shares): "NAME.ORIGIN"
  Extreme extreme = Extreme::kNone;  // a distributed job's lowest or highest rank: "NAME.min", "NAME.max"

  bool Whole() const { return pid == 0 && origin.empty() && extreme == Extreme::kNone; }
  bool operator==(const MetricScope& o) const { return pid == o.pid && origin == o.origin && extreme == o.extreme; }
};

struct Metric {
  std::string name;  // the catalogue's (core/metrics.h), dotted, e.g. "launch.kernels_per_iteration"
  double value = 0;
  std::string unit;  // "us", "count", "ratio", "bytes"
  std::string description;
  MetricScope scope;

  // The name with its scope, as reports write and compare it: "pid852.coverage.graphed_kernel_share.graph.min".
  std::string ScopedName() const;

  bool operator==(const Metric& o) const {
    return name == o.name && value == o.value && unit == o.unit && description == o.description && scope == o.scope;
  }
};

// Plot data for the HTML report, from one process's trace (analysis/report_timeline.h). It travels in the JSON
// report so that `graphcheck report FILE.json --format html` draws the same plots. Bounded in size: what was left out
// is counted in the dropped_* fields. Times are microseconds.
struct TimelineKernel {
  std::string name;
  uint64_t stream = 0;  // CUPTI's stream id
  double start_us = 0;  // from the step's start
  double duration_us = 0;

  bool operator==(const TimelineKernel& o) const {
    return name == o.name && stream == o.stream && start_us == o.start_us && duration_us == o.duration_us;
  }
};

// A host call that launched work (a kernel or a graph): the CPU side of the step, whose gaps the GPU waits for.
struct TimelineLaunch {
  double start_us = 0;  // from the step's start
  double duration_us = 0;

  bool operator==(const TimelineLaunch& o) const { return start_us == o.start_us && duration_us == o.duration_us; }
};

// One step drawn whole: its kernels per stream and its launch calls.
struct StepTimeline {
  std::string label;  // "eager step 3"
  // The step's time as the step metrics take it (analysis/launch_metrics.h, StepTimesUs): the drawn step is the one
  // of median time, so this is the median the metrics report.
  double duration_us = 0;
  // From the step's start to the end of its last kernel: longer than duration_us where the GPU ran the step's work
  // behind its launches (a GPU-bound step whose host ran ahead). The drawing's width.
  double extent_us = 0;
  std::vector<TimelineKernel> kernels;  // by start
  std::vector<TimelineLaunch> launches;
  uint64_t dropped_kernels = 0;  // beyond the cap
  uint64_t dropped_launches = 0;

  bool operator==(const StepTimeline& o) const {
    return label == o.label && duration_us == o.duration_us && extent_us == o.extent_us && kernels == o.kernels &&
           launches == o.launches && dropped_kernels == o.dropped_kernels && dropped_launches == o.dropped_launches;
  }
};

// One step of the run, for the per-step plot.
struct RunStepTime {
  std::string phase;    // "warmup" (left out by the step range), "eager", "capture", "graphed"
  double start_us = 0;  // from the first step's start
  double duration_us = 0;

  bool operator==(const RunStepTime& o) const {
    return phase == o.phase && start_us == o.start_us && duration_us == o.duration_us;
  }
};

// Kernel durations of the eager steps: counts per bucket [lower_us, upper_us).
struct HistogramBucket {
  double lower_us = 0;
  double upper_us = 0;
  uint64_t count = 0;

  bool operator==(const HistogramBucket& o) const {
    return lower_us == o.lower_us && upper_us == o.upper_us && count == o.count;
  }
};

struct Timeline {
  std::string process;  // "pid 852" or "rank 0": the trace the plots come from
  std::vector<RunStepTime> run;
  uint64_t dropped_run_steps = 0;
  std::optional<StepTimeline> eager_step;
  std::optional<StepTimeline> graphed_step;
  std::vector<HistogramBucket> kernel_durations;

  bool operator==(const Timeline& o) const {
    return process == o.process && run == o.run && dropped_run_steps == o.dropped_run_steps &&
           eager_step == o.eager_step && graphed_step == o.graphed_step && kernel_durations == o.kernel_durations;
  }
};

// How much of a process's steps ran as CUDA graph replays (analysis/coverage.h): kernels and GPU time replayed from
// graphs, by who made the graphs, against kernels launched one by one (eager). Times are microseconds.
struct CoverageShare {
  // Who made the graphs: "user", "make_graphed_callables", "cudagraph-trees", "transformer-engine", "megatron",
  // "megatron-full-iteration", or "unknown" (no probe event names the capture, or the graph was not captured).
  std::string origin;
  uint64_t kernels = 0;
  double gpu_us = 0;

  bool operator==(const CoverageShare& o) const {
    return origin == o.origin && kernels == o.kernels && gpu_us == o.gpu_us;
  }
};

// One step's split, or the sum over the steps counted.
struct StepCoverage {
  std::string label;  // "eager step 3", "graphed step 2", "all"
  uint64_t eager_kernels = 0;
  double eager_gpu_us = 0;
  std::vector<CoverageShare> graphed;  // by origin, most GPU time first

  bool operator==(const StepCoverage& o) const {
    return label == o.label && eager_kernels == o.eager_kernels && eager_gpu_us == o.eager_gpu_us &&
           graphed == o.graphed;
  }
};

// Kernels launched one by one from one call site (kernel name, NVTX path, call stack) in the steps counted, and why
// they are not graphed, where the trace knows it.
struct EagerRemainder {
  std::string kernel;
  Location where;  // its first launch: thread, stream, NVTX path, and Python frames when the launch carried them
  uint64_t launches = 0;
  uint64_t steps = 0;  // counted steps it ran in
  double gpu_us = 0;   // over the counted steps
  // "failed-capture", "compile-cudagraph-skipped", "dynamic-shape", "sync-in-region" or "never-captured".
  std::string reason;
  std::string detail;     // the reason in words
  Location reason_where;  // where the reason points (the failed capture's root cause, the sync, the skip)

  bool operator==(const EagerRemainder& o) const {
    return kernel == o.kernel && where == o.where && launches == o.launches && steps == o.steps && gpu_us == o.gpu_us &&
           reason == o.reason && detail == o.detail && reason_where == o.reason_where;
  }
};

struct Coverage {
  std::string process;  // "pid 852" or "rank 0"
  // Which steps it was computed over and which were left out for want of kernel records (sampled launch recording).
  std::string scope;
  uint64_t steps_counted = 0;
  uint64_t steps_without_records = 0;
  StepCoverage total;                      // label "all": the counted steps summed
  std::vector<StepCoverage> steps;         // the counted steps in order, up to a cap
  uint64_t dropped_steps = 0;              // counted steps beyond the cap
  std::vector<EagerRemainder> remainders;  // largest GPU time first, up to a cap
  uint64_t more_remainders = 0;            // beyond the cap

  bool operator==(const Coverage& o) const {
    return process == o.process && scope == o.scope && steps_counted == o.steps_counted &&
           steps_without_records == o.steps_without_records && total == o.total && steps == o.steps &&
           dropped_steps == o.dropped_steps && remainders == o.remainders && more_remainders == o.more_remainders;
  }
};

// The most of each list a report holds (docs/report-schema.md): producers keep this many and count the rest in the
// dropped_* fields, and a report read back is cut to them whatever it stores (report/bounded.h).
inline constexpr size_t kMaxTimelineRunSteps = 2000;  // Timeline::run
inline constexpr size_t kMaxStepKernels = 2000;       // StepTimeline::kernels
inline constexpr size_t kMaxStepLaunches = 2000;      // StepTimeline::launches
inline constexpr size_t kMaxHistogramBuckets = 200;   // Timeline::kernel_durations
inline constexpr size_t kMaxCoverageSteps = 2000;     // Coverage::steps
inline constexpr size_t kMaxCoverageRemainders = 10;  // Coverage::remainders

// A run that stopped before its checks could run (graphcheck check on a machine without a GPU): the exit code it
// ended with and why. Its report holds only what ran before, so it must never read as clean: the renderers say the
// run did not complete and `graphcheck report` exits with the same code.
struct Incomplete {
  int exit_code = 0;
  std::string reason;

  bool operator==(const Incomplete& o) const { return exit_code == o.exit_code && reason == o.reason; }
};

// One rank of a distributed job, for the side-by-side view: its process, its captures, and its own values of the
// job's metrics where the ranks differ by more than 5% (the report's metrics are the medians over the ranks).
struct RankResult {
  int32_t rank = 0;
  uint32_t pid = 0;
  std::string host;
  uint64_t captures = 0;  // CUDA graph captures begun
  uint64_t graphs = 0;    // of them, those that made a graph
  std::vector<Metric> metrics;

  bool operator==(const RankResult& o) const {
    return rank == o.rank && pid == o.pid && host == o.host && captures == o.captures && graphs == o.graphs &&
           metrics == o.metrics;
  }
};

// kIncomplete: the run stopped before its checks could run (Report::incomplete); nothing is known about capture.
enum class Capturability { kBlocked, kCaptured, kNoBlockerFound, kIncomplete };

// The report's one-line answer, which the text, Markdown and HTML reports open with: can the step be captured, and if
// not, why; and what graphs saved (measured on graphed steps) or would save (the forecast from eager steps).
struct Verdict {
  Capturability capturability = Capturability::kNoBlockerFound;
  std::string headline;  // "Not capturable: A synchronizing call ran during CUDA graph capture (sync-in-capture)"
  std::string saving;    // "Graphed steps took 812.0 us against 1203.5 us eager: x1.48"; "" when nothing was timed
};

struct Report {
  std::string tool_version;
  std::string mode;                  // "lint", "run", "analyze", "check"
  std::vector<std::string> command;  // graphcheck's own argv
  // The file the run was about (the trace analyzed, the program run, the model checked, the configuration linted):
  // where SARIF points a finding that has no source line of its own. "" when there is none.
  std::string subject;
  Machine machine;
  std::vector<Step> steps;
  std::vector<std::string> checks_run;
  std::vector<Finding> findings;
  std::vector<Metric> metrics;
  std::optional<Timeline> timeline;  // when a trace had steps to draw
  std::optional<Coverage> coverage;  // when a trace had steps: what share of them ran as graph replays
  // graphcheck check: each tensor the engine compared between the eager and the graphed run (core/numerics_sample.h).
  std::vector<NumericsSample> numerics;
  std::optional<Incomplete> incomplete;  // absent: the run completed
  std::vector<RankResult> ranks;         // a distributed job's ranks, by rank; empty otherwise
  // Computed once by the finishing step (report/finish.h) from the finished findings and the metrics; the renderers
  // read it. Not written to JSON: a report read back is finished again.
  Verdict verdict;
};

}  // namespace graphcheck

#endif  // GRAPHCHECK_CORE_REPORT_H_
