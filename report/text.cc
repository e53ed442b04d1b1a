#include "report/text.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/plural.h"
#include "core/utf8.h"
#include "report/coverage_table.h"
#include "report/limits.h"
#include "report/number_text.h"
#include "report/numerics_table.h"
#include "report/text_table.h"
#include "report/verdict.h"
#include "report/where.h"

namespace graphcheck {
namespace {

constexpr size_t kNumericsRows = 10;      // the worst tensors shown; JSON has every one
constexpr size_t kCoverageStepRows = 10;  // the first steps of the coverage table; JSON has up to its cap

class Painter {
 public:
  explicit Painter(bool color) : color_(color) {}
  std::string Paint(absl::string_view code, absl::string_view text) const {
    return color_ ? absl::StrCat("\033[", code, "m", text, "\033[0m") : std::string(text);
  }
  std::string Severity(graphcheck::Severity s) const {
    switch (s) {
      case graphcheck::Severity::kError:
        return Paint("1;31", "error");
      case graphcheck::Severity::kWarning:
        return Paint("1;33", "warning");
      case graphcheck::Severity::kNote:
        return Paint("1;36", "note");
    }
    return "";
  }
  std::string Bold(absl::string_view text) const { return Paint("1", text); }
  std::string Dim(absl::string_view text) const { return Paint("2", text); }

 private:
  bool color_;
};

}  // namespace

std::string RenderText(const Report& report, const TextOptions& options) {
  const Painter p(options.color);
  std::string out;
  if (report.incomplete) {
    absl::StrAppend(&out, p.Severity(Severity::kError), " ",
                    p.Bold(absl::StrFormat("the run did not complete (exit %d): %s", report.incomplete->exit_code,
                                           LineText(report.incomplete->reason))),
                    "\n\n");
  } else {
    // The verdict first, as the HTML and Markdown reports open with it.
    const Verdict& verdict = report.verdict;
    absl::StrAppend(&out, p.Bold(LineText(absl::StrCat("graphcheck ", report.mode, ": ", verdict.headline))), "\n");
    if (!verdict.saving.empty()) absl::StrAppend(&out, "  ", LineText(verdict.saving), "\n");
    absl::StrAppend(&out, "\n");
  }
  const size_t shown = std::min(report.findings.size(), kMaxFindingsShown);
  for (size_t i = 0; i < shown; ++i) {
    const Finding& f = report.findings[i];
    absl::StrAppend(&out, p.Severity(f.severity), " [", LineText(f.check_id), "] ", p.Bold(LineText(f.title)),
                    f.occurrences > 1 ? absl::StrCat(" (", f.occurrences, " times at this call site)") : "", "\n");
    absl::StrAppend(&out, "  ", LineText(f.message), "\n");
    const std::string where = LineText(absl::StrJoin(WhereParts(f.where), ", "));
    if (!where.empty()) absl::StrAppend(&out, "  where: ", where, "\n");
    // The Python stack is what the user wrote; the C++ frames below it are how PyTorch got to the call.
    const int python_frames = std::min<int>(options.backtrace_frames, f.where.python.size());
    for (int i = 0; i < python_frames; ++i) {
      absl::StrAppend(&out, "    py ", LineText(FrameText(f.where.python[i])), "\n");
    }
    const int frames = std::min<int>(options.backtrace_frames, f.where.backtrace.size());
    for (int i = 0; i < frames; ++i) absl::StrAppend(&out, "    #", i, " ", LineText(f.where.backtrace[i]), "\n");
    for (const std::string& e : f.evidence) absl::StrAppend(&out, "  - ", LineText(e), "\n");
    if (!f.consequences.empty()) {
      absl::StrAppend(&out, "  consequences:\n");
      for (const std::string& c : f.consequences) absl::StrAppend(&out, "  - ", LineText(c), "\n");
    }
    if (!f.fix.empty()) absl::StrAppend(&out, "  fix: ", LineText(f.fix), "\n");
    absl::StrAppend(&out, "\n");
  }
  if (shown < report.findings.size()) absl::StrAppend(&out, MoreFindingsLine(report.findings.size() - shown), "\n\n");
  if (!report.steps.empty()) {
    absl::StrAppend(&out, p.Bold("steps"), "\n");
    for (const Step& s : report.steps) {
      absl::StrAppendFormat(&out, "  %-20s %-8s %13s  %s\n", LineText(s.name), StepStatusName(s.status),
                            NumberText(s.duration_ms, 1, "ms"), LineText(s.message));
    }
  }
  if (!report.numerics.empty()) {
    const CellTable table = MakeNumericsTable(report.numerics, kNumericsRows);
    absl::StrAppend(&out, p.Bold("numerics, eager against graphed (worst first)"), "\n");
    absl::StrAppend(&out, AlignedTable(table.header, table.rows));
    if (table.omitted > 0)
      absl::StrAppend(&out, "  ... and ", Plural(table.omitted, "more tensor", "more tensors"),
                      " (--format json lists all)\n");
  }
  if (report.coverage) {
    absl::StrAppend(&out, p.Bold("coverage: graph replays against kernels launched one by one"), "\n");
    absl::StrAppend(&out, CoverageText(*report.coverage, kCoverageStepRows));
  }
  if (!report.metrics.empty()) {
    absl::StrAppend(&out, p.Bold("metrics"), "\n");
    for (const Metric& m : report.metrics) {
      absl::StrAppendFormat(&out, "  %-40s %14s %s\n", LineText(m.ScopedName()), NumberText(m.value, 3),
                            LineText(m.unit));
    }
  }
  absl::StrAppend(
      &out, p.Dim(absl::StrCat(Plural(report.checks_run.size(), "check", "checks"), " ran: ", FindingCounts(report))),
      "\n");
  return out;
}

}  // namespace graphcheck
