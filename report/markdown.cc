#include "report/markdown.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/metrics.h"
#include "core/plural.h"
#include "core/utf8.h"
#include "report/coverage_table.h"
#include "report/limits.h"
#include "report/number_text.h"
#include "report/numerics_table.h"
#include "report/verdict.h"
#include "report/where.h"

namespace graphcheck {
namespace {

constexpr size_t kMaxNumericsRows = 10;  // the worst tensors; JSON has every one
constexpr size_t kMaxCoverageRows = 20;  // steps of the coverage table; JSON has them all (up to its cap)
constexpr size_t kMaxFindingRows = 50;   // a comment stays readable, and far below the forges' 64 KiB limit

// The metrics a reviewer wants at a glance, in this order (the first of each name; a multi-rank report's rank 0).
constexpr const char* kKeyMetrics[] = {
    metric::kLaunchIterationUs.name,
    metric::kGraphedIterationUs.name,
    metric::kGraphedSpeedup.name,
    metric::kCheckSpeedup.name,
    metric::kLaunchForecastGraphedUs.name,
    metric::kLaunchForecastSavingsRatio.name,
    metric::kLaunchKernelsPerIteration.name,
    metric::kLaunchGpuUtilization.name,
};

// The headline in the open, the steps and the eager remainders folded.
std::string MarkdownCoverage(const Coverage& coverage) {
  std::string out = "**CUDA graph coverage:**";
  for (const std::string& line : CoverageHeadline(coverage)) absl::StrAppend(&out, " ", MarkdownText(line, 1000));
  absl::StrAppend(&out, "\n\n");
  if (coverage.steps_counted == 0) return out;
  const CellTable remainders = MakeRemainderTable(coverage);
  if (!remainders.rows.empty()) {
    absl::StrAppend(&out, "<details><summary>Largest eager remainders and why they are not graphed</summary>\n\n",
                    MarkdownTable(remainders.header, remainders.rows));
    if (remainders.omitted > 0)
      absl::StrAppend(&out, "\n... and ", Plural(remainders.omitted, "more call site", "more call sites"), ".\n");
    absl::StrAppend(&out, "\n</details>\n\n");
  }
  const CellTable steps = MakeCoverageStepTable(coverage, kMaxCoverageRows);
  absl::StrAppend(&out, "<details><summary>Coverage per step</summary>\n\n", MarkdownTable(steps.header, steps.rows));
  if (steps.omitted > 0) absl::StrAppend(&out, "\n... and ", Plural(steps.omitted, "more step", "more steps"), ".\n");
  absl::StrAppend(&out, "\n</details>\n\n");
  return out;
}

}  // namespace

std::string MarkdownText(absl::string_view text, size_t max_chars) {
  std::string out;
  const std::string valid = XmlSafeText(text);  // valid UTF-8, no controls, no bidirectional overrides
  for (size_t i = 0; i < valid.size(); ++i) {
    const unsigned char c = valid[i];
    // Cut before a character that would pass the limit, never inside a UTF-8 sequence.
    if (out.size() >= max_chars && (c & 0xC0) != 0x80) {
      out += "...";
      break;
    }
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '|':
        out += "&#124;";
        break;
      case '`':
        out += "&#96;";
        break;
      case '\n':
      case '\r':
      case '\t':
        out += ' ';
        break;
      case '@':
        out += "@\u200B";  // a zero-width space after it: "@user" in a merge-request comment mentions nobody
        break;
      case '\\':
      case '*':
      case '_':
      case '[':
      case ']':
      case '#':
      case '~':
      case '!':
        out += '\\';
        out += static_cast<char>(c);
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          absl::StrAppendFormat(&out, "\\\\x%02x", c);
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out;
}

std::string MarkdownTable(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows) {
  std::string out = "|";
  for (const std::string& cell : header) absl::StrAppend(&out, " ", MarkdownText(cell, 80), " |");
  absl::StrAppend(&out, "\n|");
  for (size_t i = 0; i < header.size(); ++i) absl::StrAppend(&out, "---|");
  absl::StrAppend(&out, "\n");
  for (const std::vector<std::string>& row : rows) {
    absl::StrAppend(&out, "|");
    for (const std::string& cell : row) absl::StrAppend(&out, " ", MarkdownText(cell, 120), " |");
    absl::StrAppend(&out, "\n");
  }
  return out;
}

std::string RenderMarkdown(const Report& report) {
  const Verdict& verdict = report.verdict;
  const char* mark = verdict.capturability == Capturability::kBlocked      ? ":x:"
                     : verdict.capturability == Capturability::kIncomplete ? ":warning:"
                     : verdict.capturability == Capturability::kCaptured   ? ":white_check_mark:"
                                                                           : ":heavy_check_mark:";
  std::string out = absl::StrCat("### graphcheck ", MarkdownText(report.mode, 40), ": ", mark, " ",
                                 MarkdownText(verdict.headline), "\n\n");
  if (!verdict.saving.empty()) absl::StrAppend(&out, MarkdownText(verdict.saving), "\n\n");
  absl::StrAppend(&out, "**", FindingCounts(report), "** from ", Plural(report.checks_run.size(), "check", "checks"),
                  ".\n\n");

  std::vector<const Finding*> rows;
  for (const Finding& f : report.findings) {
    if (f.severity >= Severity::kWarning) rows.push_back(&f);
  }
  if (!rows.empty()) {
    absl::StrAppend(&out, "| severity | check | finding | where |\n|---|---|---|---|\n");
    for (size_t i = 0; i < rows.size() && i < kMaxFindingRows; ++i) {
      const Finding& f = *rows[i];
      absl::StrAppend(&out, "| ", SeverityName(f.severity), " | `", MarkdownText(f.check_id, 80), "` | ",
                      MarkdownText(f.message), f.occurrences > 1 ? absl::StrCat(" (", f.occurrences, " times)") : "",
                      " | ", MarkdownText(absl::StrJoin(WhereParts(f.where), ", "), 200), " |\n");
    }
    if (rows.size() > kMaxFindingRows) {
      absl::StrAppend(&out, "\n", MoreFindingsLine(rows.size() - kMaxFindingRows), "\n");
    }
    absl::StrAppend(&out, "\n");
  }

  std::string metrics;
  for (const char* name : kKeyMetrics) {
    for (const Metric& m : report.metrics) {
      if (m.name != name || !m.scope.Whole()) continue;
      absl::StrAppend(&metrics, "| `", name, "` | ", NumberText(m.value, 3, MarkdownText(m.unit, 20)), " |\n");
      break;
    }
  }
  if (!metrics.empty()) absl::StrAppend(&out, "| metric | value |\n|---|---|\n", metrics, "\n");
  if (report.coverage) absl::StrAppend(&out, MarkdownCoverage(*report.coverage));

  if (!report.numerics.empty()) {
    const CellTable table = MakeNumericsTable(report.numerics, kMaxNumericsRows);
    absl::StrAppend(&out, "<details><summary>Numerics: eager against graphed, worst first</summary>\n\n",
                    MarkdownTable(table.header, table.rows));
    if (table.omitted > 0)
      absl::StrAppend(&out, "\n... and ", Plural(table.omitted, "more tensor", "more tensors"), ".\n");
    absl::StrAppend(&out, "\n</details>\n\n");
  }

  if (!report.steps.empty()) {
    absl::StrAppend(&out,
                    "<details><summary>Steps</summary>\n\n| step | status | time | message |\n|---|---|---|---|\n");
    for (const Step& s : report.steps) {
      absl::StrAppend(&out, "| ", MarkdownText(s.name, 80), " | ", StepStatusName(s.status), " | ",
                      NumberText(s.duration_ms, 1, "ms"), " | ", MarkdownText(s.message), " |\n");
    }
    absl::StrAppend(&out, "\n</details>\n");
  }
  return out;
}

}  // namespace graphcheck
