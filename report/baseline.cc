#include "report/baseline.h"

#include <cmath>
#include <map>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "core/exit_code.h"
#include "core/fingerprint.h"
#include "core/metrics.h"
#include "core/plural.h"
#include "core/utf8.h"
#include "report/limits.h"
#include "report/markdown.h"
#include "report/number_text.h"
#include "report/where.h"

namespace graphcheck {
namespace {

bool NameMatches(absl::string_view metric, absl::string_view name) {
  return metric == name || absl::EndsWith(metric, absl::StrCat(".", name));
}

// The findings of `from` that `against` does not hold, matched by fingerprint as multisets.
std::vector<Finding> Unmatched(const std::vector<Finding>& from, const std::vector<Finding>& against) {
  std::map<std::string, int> available;
  for (const Finding& f : against) ++available[FindingFingerprint(f)];
  std::vector<Finding> unmatched;
  for (const Finding& f : from) {
    int& count = available[FindingFingerprint(f)];
    if (count > 0) {
      --count;
    } else {
      unmatched.push_back(f);
    }
  }
  return unmatched;
}

std::string FindingLine(const Finding& f) {
  const std::string where = absl::StrJoin(WhereParts(f.where), ", ");
  return absl::StrCat(SeverityName(f.severity), " [", f.check_id, "] ", f.title.empty() ? f.message : f.title,
                      where.empty() ? "" : absl::StrCat(" (", where, ")"));
}

// "+12.5%", or "from 0" when the old value was 0 (no ratio to give: "+0.0%" would read as no change).
std::string RelativeChange(const MetricChange& m) {
  if (m.old_value == 0 && m.new_value != 0) return "from 0";
  const double percent = m.change_ratio * 100;
  return absl::StrCat(percent > 0 && std::isfinite(percent) ? "+" : "", NumberText(percent, 1, "%"));
}

std::string Value(double value) { return NumberText(value, 4, "", Notation::kSignificant); }

std::string ChangeText(const MetricChange& m) {
  std::string text = absl::StrCat(m.name, " ", Value(m.old_value), " -> ", Value(m.new_value), " ", m.unit, " (",
                                  RelativeChange(m), ")");
  if (m.regression) absl::StrAppend(&text, ": regression beyond ", NumberText(*m.limit * 100, 0, "%"));
  return text;
}

}  // namespace

std::vector<MetricThreshold> DefaultThresholds() {
  return {{metric::kGraphedSpeedup.name, 0.1},
          {metric::kLaunchIterationUs.name, 0.1},
          {metric::kGraphedIterationUs.name, 0.1},
          {metric::kCoverageGraphedGpuTimeShare.name, 0.1}};
}

absl::StatusOr<MetricThreshold> ParseThreshold(absl::string_view text) {
  const size_t equals = text.find('=');
  MetricThreshold threshold;
  absl::string_view value = equals == absl::string_view::npos ? "" : text.substr(equals + 1);
  threshold.metric = std::string(text.substr(0, equals));
  absl::ConsumeSuffix(&value, "%");
  double percent = 0;
  // NaN compares false with every regression and infinity exceeds none: either would switch the gate off.
  if (threshold.metric.empty() || !absl::SimpleAtod(value, &percent) || !std::isfinite(percent) || percent < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", text, "' must be METRIC=PERCENT with a finite PERCENT of 0 or more, e.g. graphed.speedup=10%"));
  }
  threshold.max_ratio = percent / 100;
  return threshold;
}

void SetThreshold(MetricThreshold threshold, std::vector<MetricThreshold>* thresholds) {
  for (MetricThreshold& existing : *thresholds) {
    if (existing.metric == threshold.metric) {
      existing = std::move(threshold);
      return;
    }
  }
  thresholds->push_back(std::move(threshold));
}

bool HigherIsBetter(absl::string_view metric) {
  const metric::Spec* spec = metric::Find(metric);
  return spec != nullptr && spec->better == metric::Better::kHigher;
}

ReportDiff DiffReports(const Report& old_report, const Report& new_report,
                       const std::vector<MetricThreshold>& thresholds) {
  ReportDiff diff;
  diff.appeared = Unmatched(new_report.findings, old_report.findings);
  diff.gone = Unmatched(old_report.findings, new_report.findings);
  for (const Metric& now : new_report.metrics) {
    auto before = std::find_if(old_report.metrics.begin(), old_report.metrics.end(),
                               [&](const Metric& m) { return m.name == now.name && m.scope == now.scope; });
    if (before == old_report.metrics.end() || before->value == now.value) continue;
    MetricChange change{now.ScopedName(), now.unit, before->value, now.value};
    change.change_ratio = before->value != 0 ? (now.value - before->value) / std::fabs(before->value) : 0;
    for (const MetricThreshold& t : thresholds) {
      if (NameMatches(change.name, t.metric)) change.limit = t.max_ratio;
    }
    const double worse = HigherIsBetter(now.name) ? -change.change_ratio : change.change_ratio;
    change.regression = change.limit && worse > *change.limit;
    diff.moved.push_back(std::move(change));
  }
  return diff;
}

int ExitCodeForDiff(const ReportDiff& diff, FailOn fail_on, std::vector<std::string>* reasons) {
  const Severity threshold = fail_on == FailOn::kWarning ? Severity::kWarning : Severity::kError;
  for (const Finding& f : diff.appeared) {
    if (fail_on != FailOn::kNever && f.severity >= threshold) reasons->push_back(absl::StrCat("new ", FindingLine(f)));
  }
  for (const MetricChange& m : diff.moved) {
    if (m.regression) reasons->push_back(ChangeText(m));
  }
  return reasons->empty() ? kExitClean : kExitFindings;
}

std::string RenderDiffText(const ReportDiff& diff) {
  std::string out;
  const auto lines = [&](absl::string_view prefix, size_t count, auto line) {
    for (size_t i = 0; i < count && i < kMaxFindingsShown; ++i) absl::StrAppend(&out, prefix, LineText(line(i)), "\n");
    if (count > kMaxFindingsShown) absl::StrAppend(&out, "  ... and ", count - kMaxFindingsShown, " more\n");
  };
  absl::StrAppend(&out, "appeared: ", diff.appeared.size(), "\n");
  lines("  + ", diff.appeared.size(), [&](size_t i) { return FindingLine(diff.appeared[i]); });
  absl::StrAppend(&out, "gone: ", diff.gone.size(), "\n");
  lines("  - ", diff.gone.size(), [&](size_t i) { return FindingLine(diff.gone[i]); });
  absl::StrAppend(&out, "moved: ", diff.moved.size(), "\n");
  lines("  ", diff.moved.size(), [&](size_t i) { return ChangeText(diff.moved[i]); });
  return out;
}

std::string RenderDiffMarkdown(const ReportDiff& diff) {
  std::string out = absl::StrFormat("### graphcheck diff: %d new, %d gone, %s moved\n\n", diff.appeared.size(),
                                    diff.gone.size(), Plural(diff.moved.size(), "metric", "metrics"));
  for (const auto& [title, findings] : {std::pair{"New findings", &diff.appeared}, {"Gone", &diff.gone}}) {
    if (findings->empty()) continue;
    absl::StrAppend(&out, "**", title, "**\n\n| severity | check | finding |\n|---|---|---|\n");
    for (const Finding& f : *findings) {
      absl::StrAppend(&out, "| ", SeverityName(f.severity), " | `", MarkdownText(f.check_id, 80), "` | ",
                      MarkdownText(FindingLine(f)), " |\n");
    }
    absl::StrAppend(&out, "\n");
  }
  if (!diff.moved.empty()) {
    absl::StrAppend(&out, "| metric | old | new | change | |\n|---|---|---|---|---|\n");
    for (const MetricChange& m : diff.moved) {
      absl::StrAppend(&out, "| `", MarkdownText(m.name, 120), "` | ", Value(m.old_value), " | ", Value(m.new_value),
                      " | ", RelativeChange(m), " | ", m.regression ? ":x: regression" : "", " |\n");
    }
  }
  return out;
}

}  // namespace graphcheck
