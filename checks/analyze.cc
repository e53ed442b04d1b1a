#include "checks/analyze.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "analysis/coverage.h"
#include "analysis/launch_metrics.h"
#include "analysis/ledger_comparison.h"
#include "analysis/memory_forecast.h"
#include "analysis/python_probe.h"
#include "analysis/report_timeline.h"
#include "analysis/trace_analysis.h"
#include "checks/checks.h"
#include "checks/output/stderr_messages.h"
#include "core/check_ids.h"
#include "core/fingerprint.h"
#include "core/plural.h"

namespace graphcheck::checks {

using analysis::AddTrace;
using analysis::AnalysisSettings;
using analysis::BuildTimeline;
using analysis::CaptureSummary;
using analysis::CompareLedgers;
using analysis::ComputeCoverage;
using analysis::ComputeLaunchStats;
using analysis::CoverageMetrics;
using analysis::DescribeAgreement;
using analysis::DescribeDivergence;
using analysis::ExceptionDetails;
using analysis::ForecastGraphMemory;
using analysis::IterationOptions;
using analysis::JobSummary;
using analysis::LaunchMetrics;
using analysis::LedgerDivergence;
using analysis::MemoryForecast;
using analysis::MemoryForecastMetrics;
using analysis::ProbeEventLocation;
using analysis::ProbeMetrics;
using analysis::ProcessSummary;
using analysis::ProgramOutput;
using analysis::PythonException;
using analysis::ShadowMetrics;
using analysis::SummarizeProcess;
using analysis::TraceAnalysis;

namespace {

// Ranks whose metric differs from the median by more than this are shown by name.
constexpr double kMetricSpread = 0.05;

// Keeps the first of findings that are the same problem in several processes (same fingerprint and severity; the
// message may differ by thread ids and counts). In a distributed job it names their ranks; otherwise the other
// processes go into its evidence. Two findings of one process are never merged.
void MergeAcrossProcesses(std::vector<Finding>* findings) {
  std::vector<Finding> kept;
  std::vector<std::set<uint32_t>> processes_of;  // per kept finding, the processes it stands for
  absl::flat_hash_map<std::pair<std::string, Severity>, std::vector<size_t>> index;
  for (Finding& finding : *findings) {
    // stderr findings belong to the run, not a process: never merged here (FoldStderrFindings places them).
    if (!finding.where.pid && finding.where.ranks.empty()) {
      kept.push_back(std::move(finding));
      processes_of.emplace_back();
      continue;
    }
    const uint32_t pid = finding.where.pid.value_or(0);
    std::vector<size_t>& same = index[{FindingFingerprint(finding), finding.severity}];
    auto other = std::find_if(same.begin(), same.end(), [&](size_t k) { return processes_of[k].count(pid) == 0; });
    if (other == same.end()) {
      same.push_back(kept.size());
      kept.push_back(std::move(finding));
      processes_of.push_back({pid});
      continue;
    }
    processes_of[*other].insert(pid);
    Finding& first = kept[*other];
    first.occurrences += finding.occurrences;
    if (!finding.where.ranks.empty() && !first.where.ranks.empty()) {
      first.where.ranks.insert(first.where.ranks.end(), finding.where.ranks.begin(), finding.where.ranks.end());
      first.where.pid.reset();  // several processes
    } else if (finding.where.pid) {
      first.evidence.push_back(absl::StrCat("also in process ", *finding.where.pid));
    }
  }
  for (Finding& finding : kept) {
    std::sort(finding.where.ranks.begin(), finding.where.ranks.end());
    finding.where.ranks.erase(std::unique(finding.where.ranks.begin(), finding.where.ranks.end()),
                              finding.where.ranks.end());
  }
  *findings = std::move(kept);
}

// A distributed job's metrics: per scoped name, the median over the ranks that have it, and the extremes when they
// differ (their scoped names go to *differing). Processes without a rank (a launcher, a worker) are left out.
std::vector<Metric> JobMetrics(const std::vector<ProcessResult>& processes, std::set<std::string>* differing) {
  std::vector<std::string> order;                                         // scoped names in first-seen order
  std::map<std::string, std::vector<std::pair<double, int32_t>>> values;  // scoped name -> (value, rank)
  std::map<std::string, Metric> shape;                                    // name, scope, unit and description
  for (const ProcessResult& process : processes) {
    if (process.summary.rank < 0) continue;
    for (const Metric& metric : process.metrics) {
      const std::string scoped = metric.ScopedName();
      if (shape.emplace(scoped, metric).second) order.push_back(scoped);
      values[scoped].emplace_back(metric.value, process.summary.rank);
    }
  }
  std::vector<Metric> metrics;
  for (const std::string& name : order) {
    std::vector<std::pair<double, int32_t>> v = values[name];
    std::sort(v.begin(), v.end());
    Metric median = shape[name];
    median.value = v[v.size() / 2].first;
    median.description = absl::StrCat(median.description, " (median over ", Plural(v.size(), "rank", "ranks"), ")");
    metrics.push_back(median);
    const double low = v.front().first;
    const double high = v.back().first;
    const double scale = std::max(std::abs(median.value), 1e-12);
    if ((high - low) / scale <= kMetricSpread) continue;
    differing->insert(name);
    for (const auto& [which, extreme] :
         {std::pair{MetricScope::Extreme::kMin, v.front()}, std::pair{MetricScope::Extreme::kMax, v.back()}}) {
      Metric m = shape[name];
      m.scope.extreme = which;
      m.value = extreme.first;
      m.description = absl::StrCat(m.description, " (rank ", extreme.second, ")");
      metrics.push_back(std::move(m));
    }
  }
  return metrics;
}

// The job's ranks side by side: who each is, its captures, and its own values of the metrics in `differing`.
std::vector<RankResult> RankResults(const std::vector<ProcessResult>& processes,
                                    const std::set<std::string>& differing) {
  std::vector<RankResult> ranks;
  for (const ProcessResult& process : processes) {
    const ProcessSummary& summary = process.summary;
    if (summary.rank < 0) continue;
    RankResult rank{summary.rank, summary.pid, summary.host, summary.captures.size(), 0, {}};
    rank.graphs = std::count_if(summary.captures.begin(), summary.captures.end(),
                                [](const CaptureSummary& capture) { return capture.made_graph; });
    for (const Metric& metric : process.metrics) {
      if (differing.count(metric.ScopedName()) != 0) rank.metrics.push_back(metric);
    }
    ranks.push_back(std::move(rank));
  }
  return ranks;
}

// A job's `hang` findings say what the ranks' collective ledgers show: where they part (a collective without its
// partner is the usual wait of a graphed job), or that they agree, so that the wait is on something else.
void CiteLedgersInHangs(const JobSummary& job, std::vector<Finding>* findings) {
  const bool any_hang = std::any_of(findings->begin(), findings->end(),
                                    [](const Finding& finding) { return finding.check_id == check_id::kHang; });
  if (!any_hang) return;
  const std::vector<LedgerDivergence> divergences = CompareLedgers(job);
  for (Finding& finding : *findings) {
    if (finding.check_id != check_id::kHang || finding.where.ranks.empty()) continue;
    if (!divergences.empty()) {
      absl::StrAppend(&finding.message, " The ranks' collective ledgers part (rank-divergent-collectives): ",
                      DescribeDivergence(divergences.front()), ".");
      finding.fix = absl::StrCat(
          "Mend the parting rank-divergent-collectives names: the ranks must issue their "
          "collective-bearing replays and collectives in the same order. ",
          finding.fix);
    } else {
      absl::StrAppend(&finding.message, " Yet ", DescribeAgreement(job), ": no collective recorded lacks its partner.");
      // A wait the hang check explained itself (a teardown held up by live graphs) keeps its fix.
      if (finding.fix != kHangFixWithoutCause) continue;
      finding.fix =
          "Look past the order of the collectives: ranks that captured different graphs (rank-divergent-capture), "
          "a collective whose sizes differ across ranks (the ledger compares functions and order, not sizes), a "
          "rank that stopped or fell behind in work outside CUDA (data loading, a Python thread, a file system), "
          "or a kernel that waits on a flag or on a stream that never runs. If the wait is legitimate work, raise "
          "--hang-timeout.";
    }
  }
}

// Names the process a finding or a stop came from: its pid and, in a distributed job, its rank.
void StampProcess(const ProcessSummary& process, Location* where) {
  if (process.pid != 0) where->pid = process.pid;
  if (process.rank >= 0) where->ranks = {process.rank};
}

// The findings of the checks that ran once for the whole run, as they made them.
struct UnfinishedFindings {
  std::vector<Finding> job;          // the checks that compare processes
  std::vector<Finding> from_stderr;  // the stderr checks
};

// What the analysis finishes of the findings, in one place and in this order (the report's finishing step,
// report/finish.h, does the rest):
// 1. each process's findings and stops stamped with the process;
// 2. the same problem found in several processes kept once, naming them (MergeAcrossProcesses);
// 3. in a distributed job, the `hang` findings citing the collective ledgers (CiteLedgersInHangs);
// 4. the stderr findings folded into the trace findings of their root cause (FoldStderrFindings).
// `summary.processes[i]` is `processes[i]`'s summary; `job`: the processes are a distributed job's ranks.
std::vector<Finding> FinishFindings(std::vector<ProcessResult>* processes, const JobSummary& summary,
                                    UnfinishedFindings unfinished, bool job) {
  std::vector<Finding> findings;
  TraceSummary traces;
  traces.recorded = !processes->empty();
  for (size_t i = 0; i < processes->size(); ++i) {
    ProcessResult& process = (*processes)[i];
    const ProcessSummary& identity = summary.processes[i];
    traces.captures += identity.captures.size();
    for (ProgramStop& stop : process.stops) {
      StampProcess(identity, &stop.where);
      traces.stops.push_back(std::move(stop));
    }
    for (Finding& finding : process.findings) {
      StampProcess(identity, &finding.where);
      findings.push_back(std::move(finding));
    }
  }
  for (Finding& finding : unfinished.job) findings.push_back(std::move(finding));
  for (Finding& finding : unfinished.from_stderr) findings.push_back(std::move(finding));
  MergeAcrossProcesses(&findings);
  if (job) CiteLedgersInHangs(summary, &findings);
  FoldStderrFindings(traces, &findings);
  return findings;
}

}  // namespace

ProcessResult AnalyzeProcess(const trace::Trace& trace, const AnalysisSettings& settings, const CheckRegistry& registry,
                             const CheckSelection& selection, const CheckOptions& options) {
  ProcessResult result;
  const TraceAnalysis analysis(trace, settings);
  // The environment checks read the GPU (compute capability) from the environment snapshot.
  Environment environment = trace.environment;
  if (!environment.gpu() && !trace.devices.empty()) environment.set_gpu(trace.devices.front().gpu);
  CheckInputs inputs;
  AddTrace(analysis, &inputs).Add(environment);
  CheckRun run = RunChecks(registry, selection, options, inputs);
  result.checks_run = std::move(run.checks_run);
  result.findings = std::move(run.findings);
  const IterationOptions& steps = settings.steps;
  result.metrics = LaunchMetrics(ComputeLaunchStats(analysis, steps, settings.launch));
  if (const std::optional<MemoryForecast> memory = ForecastGraphMemory(analysis, steps, settings.launch)) {
    for (Metric& metric : MemoryForecastMetrics(*memory)) result.metrics.push_back(std::move(metric));
  }
  result.timeline = BuildTimeline(analysis, steps);
  result.coverage = ComputeCoverage(analysis, steps);
  if (result.coverage) {
    for (Metric& metric : CoverageMetrics(*result.coverage)) result.metrics.push_back(std::move(metric));
  }
  for (Metric& metric : ProbeMetrics(trace, analysis.probe(), analysis.captures().windows())) {
    result.metrics.push_back(std::move(metric));
  }
  for (Metric& metric : ShadowMetrics(trace)) result.metrics.push_back(std::move(metric));
  result.summary = SummarizeProcess(analysis);
  for (const PythonException& exception : analysis.probe().exceptions()) {
    if (exception.record.in_capture || exception.rule == nullptr) continue;
    ProgramStop& stop = result.stops.emplace_back();
    stop.check_id = exception.check_id;
    stop.where = ProbeEventLocation(trace, exception.record.at);
    stop.details = ExceptionDetails(exception.record.message);
  }
  return result;
}

AnalysisResult MergeProcesses(std::vector<ProcessResult> processes, const std::vector<std::string>* stderr_lines,
                              const CheckRegistry& registry, const CheckSelection& selection,
                              const CheckOptions& options) {
  AnalysisResult result;
  std::set<std::string> checks_run;
  const bool job =
      std::count_if(processes.begin(), processes.end(), [](const ProcessResult& p) { return p.summary.rank >= 0; }) > 1;
  if (job) {
    std::set<std::string> differing;
    result.metrics = JobMetrics(processes, &differing);
    result.ranks = RankResults(processes, differing);
  }
  JobSummary summary;
  for (ProcessResult& process : processes) {
    if (!result.timeline) result.timeline = std::move(process.timeline);
    if (!result.coverage) result.coverage = std::move(process.coverage);
    if (!job) {
      for (Metric& metric : process.metrics) {
        if (processes.size() > 1) metric.scope.pid = process.summary.pid;
        result.metrics.push_back(std::move(metric));
      }
    }
    checks_run.insert(process.checks_run.begin(), process.checks_run.end());
    summary.processes.push_back(std::move(process.summary));
  }
  UnfinishedFindings unfinished;
  auto run_checks_on = [&](const CheckInputs& inputs, std::vector<Finding>* findings) {
    CheckRun run = RunChecks(registry, selection, options, inputs);
    checks_run.insert(run.checks_run.begin(), run.checks_run.end());
    *findings = std::move(run.findings);
  };
  if (job) {
    CheckInputs inputs;
    inputs.Add(summary);
    run_checks_on(inputs, &unfinished.job);
  }
  if (stderr_lines != nullptr) {
    const ProgramOutput output{*stderr_lines};
    CheckInputs inputs;
    inputs.Add(output);
    run_checks_on(inputs, &unfinished.from_stderr);
  }
  result.findings = FinishFindings(&processes, summary, std::move(unfinished), job);
  result.checks_run.assign(checks_run.begin(), checks_run.end());
  return result;
}

AnalysisResult AnalyzeTraces(const std::vector<const trace::Trace*>& traces,
                             const std::vector<std::string>* stderr_lines, const CheckRegistry& registry,
                             const CheckSelection& selection, const CheckOptions& options) {
  std::vector<ProcessResult> processes;
  processes.reserve(traces.size());
  for (const trace::Trace* trace : traces)
    processes.push_back(AnalyzeProcess(*trace, AnalysisSettings(), registry, selection, options));
  return MergeProcesses(std::move(processes), stderr_lines, registry, selection, options);
}

}  // namespace graphcheck::checks
