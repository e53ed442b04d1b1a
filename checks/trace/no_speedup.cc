// no-speedup: the program replays CUDA graphs, and its graphed steps are not faster than its eager steps by at least
// `min-speedup`. The gate for "graphs on, nothing gained". Only like is compared with like: eager and graphed steps
// whose GPU work differs by more than `max-work-ratio`, or whose kernels are mostly other kernels, are not one step
// run two ways (a program's set-up or evaluation loop against its graphed training loop) and are not judged.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_format.h"
#include "analysis/launch_metrics.h"
#include "analysis/trace_analysis.h"
#include "checks/checks.h"
#include "core/check_ids.h"
#include "core/plural.h"

namespace graphcheck::checks {

using analysis::ComputeLaunchStats;
using analysis::Iteration;
using analysis::Iterations;
using analysis::LaunchRecorded;
using analysis::LaunchStats;
using analysis::TraceAnalysis;

namespace {

std::vector<CheckOption> NoSpeedupOptions() {
  return {{"min-speedup", "1.05", "eager step time / graphed step time below this is reported", 0, 1e6},
          {"min-steps", "5", "judge only with at least this many eager and this many graphed steps", 1, 1e9},
          {"max-work-ratio", "3",
           "judge only when the eager and the graphed steps' GPU busy times, and their kernel counts, are within this "
           "factor of each other",
           1, 1e6},
          {"min-shared-kernels", "0.5",
           "judge only when at least this share of the distinct kernels (by name) the eager and the graphed steps ran "
           "is common to both",
           0, 1},
          {"noise", "0.05",
           "graphed steps slower than eager by more than this (or the steps' own spread, if larger) "
           "are a warning; otherwise a note",
           0, 10}};
}

// How much the steps' host spans vary: (p90 - p10) / median, 0 with fewer than 2 steps.
double RelativeSpread(const std::vector<Iteration>& steps) {
  std::vector<double> us;
  for (const Iteration& step : steps) us.push_back((step.end_ns - step.start_ns) / 1e3);
  if (us.size() < 2) return 0;
  std::sort(us.begin(), us.end());
  const double median = us[us.size() / 2];
  return median > 0 ? (us[us.size() * 9 / 10] - us[us.size() / 10]) / median : 0;
}

// "median 64.1 us (min 60.2, max 71.0)" of the steps' host spans.
std::string DescribeSpread(const std::vector<Iteration>& steps) {
  std::vector<double> us;
  for (const Iteration& step : steps) us.push_back((step.end_ns - step.start_ns) / 1e3);
  if (us.empty()) return "none";
  std::sort(us.begin(), us.end());
  return absl::StrFormat("median %.1f us (min %.1f, max %.1f)", us[us.size() / 2], us.front(), us.back());
}

// Whether `a` and `b` are within `max_ratio` of each other; unknown (0) counts as within.
bool Within(double a, double b, double max_ratio) {
  return a <= 0 || b <= 0 || std::max(a, b) <= max_ratio * std::min(a, b);
}

// Whether the eager and the graphed steps do about the same GPU work: a graph replays the kernels the eager step
// launched, so the same step run two ways keeps the GPU busy about as long and runs about as many kernels, copies and
// memsets. Busy time alone cannot tell microsecond kernels apart: a torch.compile decode loop's first steps (two
// fills, 1.6 us busy) against its replays of the compiled step looked like one step on an H200.
bool SameWork(const LaunchStats& stats, double max_ratio) {
  const double graphed_nodes =
      stats.graphed.replayed_kernels > 0 ? stats.graphed.nodes + stats.graphed.replayed_kernels : 0;
  return Within(stats.eager.gpu_busy_us, stats.graphed.gpu_busy_us, max_ratio) &&
         Within(stats.eager.nodes, graphed_nodes, max_ratio);
}

// The distinct kernels, by name, that `steps` ran: those launched one by one and those their graph launches replayed
// (`replayed`: a graph launch's correlation id -> the names of the kernels it ran).
absl::flat_hash_set<trace::StringId> KernelNames(
    const TraceAnalysis& analysis, const std::vector<Iteration>& steps,
    const absl::flat_hash_map<uint64_t, std::vector<trace::StringId>>& replayed) {
  const trace::Trace& trace = analysis.trace();
  absl::flat_hash_set<trace::StringId> names;
  for (const Iteration& step : steps) {
    for (size_t i = step.first_call; i < step.end_call; ++i) {
      const trace::ApiCall& call = trace.api_calls[i];
      if (call.capture_status != trace::CaptureStatus::kNone) continue;
      if (call.kind == trace::ApiKind::kKernelLaunch) {
        const int64_t k = analysis.kernel_by_correlation().Find(call.correlation_id);
        if (k >= 0) names.insert(trace.Shape(trace.kernels[k]).name);
      } else if (call.kind == trace::ApiKind::kGraphLaunch) {
        if (auto it = replayed.find(call.correlation_id); it != replayed.end()) {
          names.insert(it->second.begin(), it->second.end());
        }
      }
    }
  }
  return names;
}

// Whether the eager and the graphed steps run mostly the same kernels: a graph replays the kernels its eager step
// launched. Counts and busy times alone can match by chance: on an H200, a torch.compile decode loop's first steps (two
// fills) against its replays (one fused Triton kernel and a GEMM, beside a fill) gave x0.22. Unknown (no kernel
// records on either side) counts as the same.
bool SameKernels(const TraceAnalysis& analysis, const Iterations& steps, double min_shared) {
  absl::flat_hash_map<uint64_t, std::vector<trace::StringId>> replayed;
  for (const trace::KernelActivity& kernel : analysis.trace().kernels) {
    if (kernel.graph_id != 0) replayed[kernel.correlation_id].push_back(analysis.trace().Shape(kernel).name);
  }
  const auto eager = KernelNames(analysis, LaunchRecorded(steps.eager), replayed);
  const auto graphed = KernelNames(analysis, LaunchRecorded(steps.graphed), replayed);
  if (eager.empty() || graphed.empty()) return true;
  size_t shared = 0;
  for (trace::StringId name : eager) shared += graphed.contains(name);
  const size_t either = eager.size() + graphed.size() - shared;
  return shared >= min_shared * either;
}

class NoSpeedupCheck : public CheckOf<TraceAnalysis> {
 public:
  NoSpeedupCheck()
      : CheckOf(CheckInfo{
            check_id::kNoSpeedup, "Graphed steps are not faster than eager steps", Severity::kWarning,
            CheckArea::kPerformance,
            "The trace holds at least min-steps eager and min-steps graphed steps, and the graphed ones are not faster "
            "by min-speedup: the step is GPU-bound, or the graphs cover too little of it. A warning when the graphed "
            "steps are slower beyond the steps' noise, a note when graphs merely do not pay off.",
            NoSpeedupOptions()}) {}

 protected:
  void Read(const TraceAnalysis& analysis, const BoundOptions& options, std::vector<Finding>* findings) const override {
    const LaunchStats stats = ComputeLaunchStats(analysis, analysis.settings().steps, analysis.settings().launch);
    // A speedup from a handful of steps is noise (first-call work, a capture's warmup): judge only with enough of each.
    const size_t min_steps = static_cast<size_t>(options.GetDouble("min-steps"));
    if (stats.eager.steps < min_steps || stats.graphed.steps < min_steps || stats.graphed.step_us <= 0) return;
    const double speedup = stats.eager_step_us / stats.graphed.step_us;
    if (speedup >= options.GetDouble("min-speedup") || !SameWork(stats, options.GetDouble("max-work-ratio"))) return;
    const Iterations& steps = analysis.steps();
    if (!SameKernels(analysis, steps, options.GetDouble("min-shared-kernels"))) return;
    const double noise = std::max({options.GetDouble("noise"), RelativeSpread(LaunchRecorded(steps.eager)),
                                   RelativeSpread(LaunchRecorded(steps.graphed))});
    const bool slower = stats.graphed.step_us > stats.eager_step_us * (1 + noise);
    // A min-speedup set high (x10) also reports graphs that clearly pay off, only not that much: not "noise".
    const bool faster = stats.eager_step_us > stats.graphed.step_us * (1 + noise);
    Finding finding = NewFinding();
    if (!slower) finding.severity = Severity::kNote;  // graphs do not pay off here; nothing got worse
    if (analysis.trace().process.pid != 0) finding.where.pid = analysis.trace().process.pid;
    finding.where.nvtx_path = analysis.settings().steps.region;
    const double utilization = stats.eager_step_us > 0 ? stats.eager.gpu_busy_us / stats.eager_step_us : 0;
    finding.message = absl::StrFormat(
        "Graphed steps take %.1f us against %.1f us eager (speedup x%.2f; %s): %s", stats.graphed.step_us,
        stats.eager_step_us, speedup,
        slower   ? absl::StrFormat("slower beyond the steps' noise of %.0f%%", 100 * noise)
        : faster ? absl::StrFormat("faster beyond the steps' noise of %.0f%%, but short of min-speedup x%.2f",
                                   100 * noise, options.GetDouble("min-speedup"))
                 : absl::StrFormat("within the steps' noise of %.0f%%: graphs do not pay off here", 100 * noise),
        utilization > 0.9 ? "the eager step already keeps the GPU busy, so there is no launch overhead to remove."
                          : "the graphs cover too little of the step, or eager work remains between replays.");
    finding.evidence = {
        absl::StrCat(Plural(stats.eager.steps, "eager step", "eager steps"), " and ",
                     Plural(stats.graphed.steps, "graphed step", "graphed steps"), " from ", stats.source),
        absl::StrFormat("host span per step: eager %s, graphed %s", DescribeSpread(LaunchRecorded(steps.eager)),
                        DescribeSpread(LaunchRecorded(steps.graphed))),
        absl::StrFormat("eager GPU utilization %.0f%%; %.0f kernels per eager step", 100 * utilization,
                        stats.eager.kernels),
        absl::StrFormat("graphed steps: %.1f graph launches and %.0f eager kernels each", stats.graphed.graph_launches,
                        stats.graphed.kernels),
    };
    finding.fix =
        "Graph a larger part of the step (forward, backward and optimizer together) and move the remaining eager "
        "work out of the loop; if the eager step is already GPU-bound, graphs will not help: optimize the kernels "
        "instead.";
    findings->push_back(std::move(finding));
  }
};

}  // namespace

std::unique_ptr<Check> NewNoSpeedupCheck() { return std::make_unique<NoSpeedupCheck>(); }

}  // namespace graphcheck::checks
