// The one-line verdict at the top of the text, HTML and Markdown reports (core/report.h: Verdict), from the findings
// and the metrics.
#ifndef GRAPHCHECK_REPORT_VERDICT_H_
#define GRAPHCHECK_REPORT_VERDICT_H_

#include <optional>
#include <string>

#include "core/report.h"

namespace graphcheck {

// The verdict of a report whose findings are in report order (the most severe first): the finishing step's
// (report/finish.h), which stores it in Report::verdict.
Verdict ComputeVerdict(const Report& report);

// "1 error, 2 warnings, 0 notes": the report's findings counted by severity.
std::string FindingCounts(const Report& report);

// The first metric named `name` (a catalogue name), for the whole run or, in a report of several processes, one
// process (MetricScope::pid): not a maker's share or a rank's extreme.
std::optional<double> FindMetric(const Report& report, const std::string& name);

}  // namespace graphcheck

#endif  // GRAPHCHECK_REPORT_VERDICT_H_
