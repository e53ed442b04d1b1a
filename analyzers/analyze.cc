#include "analyzers/analyze.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "analyzers/launch_metrics.h"
#include "analyzers/report_timeline.h"
#include "analyzers/stderr_messages.h"
#include "analyzers/trace_analysis.h"

namespace graphcheck::analyzers {
namespace {

std::string ProcessName(const trace::Trace& trace) {
  return trace.process.rank >= 0 ? absl::StrCat("rank", trace.process.rank) : absl::StrCat("pid", trace.process.pid);
}

// Keeps the first of findings that differ only in their process.
void MergeAcrossProcesses(std::vector<Finding>* findings) {
  std::vector<Finding> kept;
  std::vector<Finding> keys;  // kept[i] without its process, as first seen
  for (Finding& finding : *findings) {
    Finding key = finding;
    key.where.pid.reset();
    auto same = std::find(keys.begin(), keys.end(), key);
    if (same == keys.end()) {
      keys.push_back(std::move(key));
      kept.push_back(std::move(finding));
    } else if (finding.where.pid) {
      kept[same - keys.begin()].evidence.push_back(absl::StrCat("also in process ", *finding.where.pid));
    }
  }
  *findings = std::move(kept);
}

}  // namespace

AnalysisResult AnalyzeTraces(const std::vector<const trace::Trace*>& traces,
                             const std::vector<std::string>* stderr_lines, const CheckRegistry& registry,
                             const CheckSelection& selection, const CheckOptions& options) {
  AnalysisResult result;
  std::set<std::string> checks_run;
  auto take = [&](CheckRun run) {
    checks_run.insert(run.checks_run.begin(), run.checks_run.end());
    for (Finding& finding : run.findings) result.findings.push_back(std::move(finding));
  };
  TraceSummary summary;
  summary.recorded = !traces.empty();
  for (const trace::Trace* trace : traces) {
    const TraceAnalysis analysis(*trace);
    summary.captures += analysis.captures().windows().size();
    // The environment checks read the GPU (compute capability) from the environment snapshot.
    Environment environment = trace->environment;
    if (!environment.gpu() && !trace->devices.empty()) environment.set_gpu(trace->devices.front().gpu);
    CheckInputs inputs;
    inputs.trace = trace;
    inputs.environment = &environment;
    inputs.derived = &analysis;
    CheckRun run = RunChecks(registry, selection, options, inputs);
    for (Finding& finding : run.findings) {
      if (trace->process.pid != 0) finding.where.pid = trace->process.pid;
    }
    take(std::move(run));
    if (const Check* launch_bound = registry.Find("launch-bound")) {
      const BoundOptions bound(launch_bound->info(), options);
      const IterationOptions steps = IterationOptionsFrom(bound);
      const LaunchStats stats = ComputeLaunchStats(analysis, steps, LaunchModelFrom(bound));
      if (!result.timeline) result.timeline = BuildTimeline(analysis, steps);
      std::vector<Metric> metrics = LaunchMetrics(stats);
      for (Metric& metric : ProbeMetrics(*trace, analysis.probe(), analysis.captures().windows())) {
        metrics.push_back(std::move(metric));
      }
      for (Metric& metric : metrics) {
        if (traces.size() > 1) metric.name = absl::StrCat(ProcessName(*trace), ".", metric.name);
        result.metrics.push_back(std::move(metric));
      }
    }
  }
  if (stderr_lines != nullptr) {
    CheckInputs inputs;
    inputs.stderr_lines = stderr_lines;
    take(RunChecks(registry, selection, options, inputs));
  }
  MergeAcrossProcesses(&result.findings);
  static const std::vector<std::string> kNoLines;
  FoldStderrFindings(stderr_lines != nullptr ? *stderr_lines : kNoLines, summary, &result.findings);
  SortFindings(&result.findings);
  result.checks_run.assign(checks_run.begin(), checks_run.end());
  return result;
}

}  // namespace graphcheck::analyzers
