#include "report/verdict.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/metrics.h"
#include "core/plural.h"
#include "report/number_text.h"

namespace graphcheck {

std::optional<double> FindMetric(const Report& report, const std::string& name) {
  for (const Metric& m : report.metrics) {
    if (m.name == name && m.scope.origin.empty() && m.scope.extreme == MetricScope::Extreme::kNone) return m.value;
  }
  return std::nullopt;
}

Verdict ComputeVerdict(const Report& report) {
  Verdict verdict;
  // Findings are sorted most severe first: an error is the reason the step cannot be captured (or the run failed).
  if (!report.findings.empty() && report.findings.front().severity == Severity::kError) {
    const Finding& first = report.findings.front();
    verdict.capturability = Capturability::kBlocked;
    verdict.headline =
        absl::StrCat("Not capturable: ", first.title.empty() ? first.message : first.title, " (", first.check_id, ")");
  }
  const std::optional<double> eager = FindMetric(report, metric::kLaunchIterationUs.name);
  const std::optional<double> graphed = FindMetric(report, metric::kGraphedIterationUs.name);
  const std::optional<double> speedup = FindMetric(report, metric::kGraphedSpeedup.name);
  const std::optional<double> engine_speedup = FindMetric(report, metric::kCheckSpeedup.name);
  const std::optional<double> forecast = FindMetric(report, metric::kLaunchForecastGraphedUs.name);
  const std::optional<double> forecast_ratio = FindMetric(report, metric::kLaunchForecastSavingsRatio.name);
  const bool graphs_ran = (graphed && speedup) || engine_speedup;
  if (report.incomplete) {
    verdict.capturability = Capturability::kIncomplete;
    verdict.headline = absl::StrFormat("The run did not complete (exit %d): %s", report.incomplete->exit_code,
                                       report.incomplete->reason);
  } else if (verdict.capturability != Capturability::kBlocked) {
    verdict.capturability = graphs_ran ? Capturability::kCaptured : Capturability::kNoBlockerFound;
    verdict.headline = graphs_ran ? "Capturable: graphed steps ran with no error"
                                  : "No capture blocker found (no graphed step in this run)";
  }
  if (eager && graphed && speedup) {
    verdict.saving = absl::StrCat("Measured: graphed steps took ", NumberText(*graphed, 1, "us"), " against ",
                                  NumberText(*eager, 1, "us"), " eager (x", NumberText(*speedup, 2), ")");
  } else if (engine_speedup) {
    verdict.saving = absl::StrCat("Measured: graphed steps x", NumberText(*engine_speedup, 2), " faster than eager");
  } else if (eager && forecast && forecast_ratio) {
    verdict.saving =
        absl::StrCat("Forecast: ", NumberText(*forecast, 1, "us"), " per step graphed against ",
                     NumberText(*eager, 1, "us"), " eager (", NumberText(*forecast_ratio * 100, 0, "%"), " saved)");
  }
  return verdict;
}

std::string FindingCounts(const Report& report) {
  uint64_t counts[3] = {0, 0, 0};
  for (const Finding& f : report.findings) ++counts[static_cast<int>(f.severity)];
  return absl::StrCat(Plural(counts[2], "error", "errors"), ", ", Plural(counts[1], "warning", "warnings"), ", ",
                      Plural(counts[0], "note", "notes"));
}

}  // namespace graphcheck
