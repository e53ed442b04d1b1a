// Analysis of recorded traces: runs the selected checks on each process's trace (with the environment it recorded),
// once on the program's stderr, and once on the whole job (the checks that compare processes); computes the launch
// metrics; merges everything for one report. Each process is analyzed on its own (AnalyzeProcess) and only its
// result is kept, so a job of hundreds of ranks never holds more than a few traces at once; MergeProcesses joins the
// results. Shared by `graphcheck analyze`, `graphcheck run` and the golden tests.
#ifndef GRAPHCHECK_CHECKS_ANALYZE_H_
#define GRAPHCHECK_CHECKS_ANALYZE_H_

#include <optional>
#include <string>
#include <vector>

#include "analysis/job_summary.h"
#include "analysis/trace_analysis.h"
#include "checks/output/stderr_messages.h"
#include "core/registry.h"
#include "core/report.h"
#include "trace/events.h"

namespace graphcheck::checks {

struct AnalysisResult {
  std::vector<std::string> checks_run;  // sorted, unique
  std::vector<Finding> findings;        // unsorted: the report's finishing step (report/finish.h) sorts them once
  std::vector<Metric> metrics;
  std::optional<Timeline> timeline;  // plot data of the first trace that has steps (analysis/report_timeline.h)
  std::optional<Coverage> coverage;  // graph coverage of the first trace that has steps (analysis/coverage.h)
  std::vector<RankResult> ranks;     // a distributed job's ranks (see MergeProcesses); empty otherwise
};

// What one process's analysis leaves once its trace is dropped.
struct ProcessResult {
  std::vector<std::string> checks_run;
  std::vector<Finding> findings;  // as the checks made them: MergeProcesses names the process
  std::vector<Metric> metrics;    // launch and probe metrics, not yet named by process
  std::optional<Timeline> timeline;
  std::optional<Coverage> coverage;
  analysis::ProcessSummary summary;  // for the checks that compare processes (rank-divergent-capture)
  std::vector<ProgramStop> stops;    // the uncaught exceptions a rule knows, for FoldStderrFindings
};

// `settings`: the steps and launch model every check and metric of this analysis reads.
ProcessResult AnalyzeProcess(const trace::Trace& trace, const analysis::AnalysisSettings& settings,
                             const CheckRegistry& registry, const CheckSelection& selection,
                             const CheckOptions& options);

// Joins the processes' results, in the order given (by rank, then pid, for a stable report), with the stderr
// checks and the job checks:
// - findings, finished in one step as far as the analysis can (the report's finishing step, report/finish.h, does
//   the rest): each named by its process's pid and rank; the same problem (by fingerprint and severity) found in
//   several processes kept once, from the first process, with where.ranks naming every rank (a distributed job) or
//   "also in process N" evidence; a job's `hang` findings citing the collective ledgers; the stderr findings folded
//   into the trace findings of their root cause;
// - metrics: one process's as they are; several unranked processes' prefixed "pid<P>."; a distributed job's as the
//   median over its ranks, with NAME.min and NAME.max (naming their ranks) where ranks differ by more than 5%;
// - ranks: a distributed job's ranks side by side: each one's process, captures, and its values of the metrics that
//   differ.
AnalysisResult MergeProcesses(std::vector<ProcessResult> processes, const std::vector<std::string>* stderr_lines,
                              const CheckRegistry& registry, const CheckSelection& selection,
                              const CheckOptions& options);

// AnalyzeProcess of each trace with the default settings (every step but the first, found by repetition; the default
// launch model), then MergeProcesses.
AnalysisResult AnalyzeTraces(const std::vector<const trace::Trace*>& traces,
                             const std::vector<std::string>* stderr_lines, const CheckRegistry& registry,
                             const CheckSelection& selection, const CheckOptions& options);

}  // namespace graphcheck::checks

#endif  // GRAPHCHECK_CHECKS_ANALYZE_H_
