// Analysis of recorded traces: runs the selected checks on each process's trace (with the environment it recorded),
// once on the program's stderr, and computes the launch metrics; merges everything for one report. Shared by
// `graphcheck analyze`, `graphcheck run` and the golden tests.
#ifndef GRAPHCHECK_ANALYZERS_ANALYZE_H_
#define GRAPHCHECK_ANALYZERS_ANALYZE_H_

#include <optional>
#include <string>
#include <vector>

#include "core/registry.h"
#include "core/report.h"
#include "core/trace/events.h"

namespace graphcheck::analyzers {

struct AnalysisResult {
  std::vector<std::string> checks_run;  // sorted, unique
  std::vector<Finding> findings;        // sorted as SortFindings does
  std::vector<Metric> metrics;
  std::optional<Timeline> timeline;  // plot data of the first trace that has steps (analyzers/report_timeline.h)
};

// Findings get Location::pid from their trace; a finding that several processes share word for word (an environment
// variable set for every rank) is kept once, its other processes named in its evidence. stderr findings are folded
// into trace findings of the same check id. Metrics use launch-bound's options (region, steps, the launch model);
// with several traces their names are prefixed "rank<R>." (or "pid<P>." without a rank).
AnalysisResult AnalyzeTraces(const std::vector<const trace::Trace*>& traces,
                             const std::vector<std::string>* stderr_lines, const CheckRegistry& registry,
                             const CheckSelection& selection, const CheckOptions& options);

}  // namespace graphcheck::analyzers

#endif  // GRAPHCHECK_ANALYZERS_ANALYZE_H_
