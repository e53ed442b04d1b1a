// Comparing a report with an earlier one (`--baseline OLD.json`, `graphcheck diff OLD.json NEW.json`): which findings
// appeared and which went away, matched by fingerprint (core/fingerprint.h, the same as SARIF's), and how the
// metrics moved, with a regression wherever a metric moved the wrong way by more than its threshold.
#ifndef GRAPHCHECK_REPORT_BASELINE_H_
#define GRAPHCHECK_REPORT_BASELINE_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/report.h"
#include "report/policy.h"

namespace graphcheck {

// A metric may get worse by at most `max_ratio` of its old value (0.1 = 10%). Which way is worse comes from the
// name: speedups, utilization, savings and graph coverage (coverage.graphed_*) are better higher, everything else
// (times, counts) lower.
struct MetricThreshold {
  std::string metric;  // a metric name; also matches "rank0.NAME" and "pid12.NAME" of multi-process reports
  double max_ratio = 0.1;
};

// graphed.speedup, launch.iteration_us, graphed.iteration_us and coverage.graphed_gpu_time_share at 10%.
std::vector<MetricThreshold> DefaultThresholds();
// "graphed.speedup=10%" (the % is optional: the number is a percentage). Later thresholds for the same metric
// replace earlier ones, so command-line values win over the configuration file's and the defaults. The error does not
// name where the text came from: the caller does (--max-regression, or the configuration file's max-regression).
absl::StatusOr<MetricThreshold> ParseThreshold(absl::string_view text);
void SetThreshold(MetricThreshold threshold, std::vector<MetricThreshold>* thresholds);
// Whether `metric` (a catalogue name, with a job's scope) improves upwards: its catalogue entry's direction.
bool HigherIsBetter(absl::string_view metric);

struct MetricChange {
  std::string name;
  std::string unit;
  double old_value = 0;
  double new_value = 0;
  double change_ratio = 0;      // (new - old) / |old|; 0 when old is 0
  std::optional<double> limit;  // the threshold that applies, if any
  bool regression = false;      // moved the wrong way by more than the limit
};

struct ReportDiff {
  std::vector<Finding> appeared;    // in the new report only (counted per fingerprint: a second copy is new too)
  std::vector<Finding> gone;        // in the old report only
  std::vector<MetricChange> moved;  // metrics in both whose value changed, in the new report's order
};

ReportDiff DiffReports(const Report& old_report, const Report& new_report,
                       const std::vector<MetricThreshold>& thresholds);

// Exit code for a baseline comparison: kExitFindings when a finding that appeared is at or above `fail_on`, or a
// metric regressed; kExitClean otherwise. `reasons` gets one line per cause.
int ExitCodeForDiff(const ReportDiff& diff, FailOn fail_on, std::vector<std::string>* reasons);

// Renderings of a diff: text for terminals, Markdown for a merge-request comment (JSON: report/json.h).
std::string RenderDiffText(const ReportDiff& diff);
std::string RenderDiffMarkdown(const ReportDiff& diff);

}  // namespace graphcheck

#endif  // GRAPHCHECK_REPORT_BASELINE_H_
