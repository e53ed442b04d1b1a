// libFuzzer target for `graphcheck report FILE.json` and `graphcheck diff`: any bytes either fail to parse as a report
// (a status, never a crash) or render in every format, and what renders must be well formed: JSON that reads back as
// the same report, JUnit XML that parses, SARIF that is JSON; and the text report, whatever strings the report holds,
// carries no terminal escape and no bidirectional override, and starts no more finding lines than it has findings.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include <nlohmann/json.hpp>
#include <pugixml.hpp>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "report/baseline.h"
#include "report/json.h"
#include "report/output.h"

namespace {

// Program strings must not drive the terminal (ESC, U+202E and its kin) or forge a finding of their own on a line.
void CheckHostileStringsStayInTheirLines(const graphcheck::Report& report, absl::string_view text) {
  if (absl::StrContains(text, "\x1b") || absl::StrContains(text, "\xE2\x80\xAE") ||
      absl::StrContains(text, "\xE2\x81\xA6")) {
    std::abort();
  }
  size_t finding_lines = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    finding_lines += absl::StartsWith(line, "error [") || absl::StartsWith(line, "warning [") ||
                     absl::StartsWith(line, "note [");
  }
  if (finding_lines > report.findings.size()) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace graphcheck;  // NOLINT
  absl::StatusOr<Report> report = ReportFromJson(absl::string_view(reinterpret_cast<const char*>(data), size));
  if (!report.ok()) return 0;
  for (ReportFormat format : {ReportFormat::kText, ReportFormat::kJson, ReportFormat::kJunit, ReportFormat::kSarif,
                              ReportFormat::kMarkdown, ReportFormat::kHtml}) {
    RenderOptions options;
    options.format = format;
    const std::string text = RenderReport(*report, options);
    if (format == ReportFormat::kJson && !ReportFromJson(text).ok()) std::abort();
    if (format == ReportFormat::kSarif && !nlohmann::json::accept(text)) std::abort();
    if (format == ReportFormat::kJunit && !pugi::xml_document().load_string(text.c_str())) std::abort();
    if (format == ReportFormat::kText) CheckHostileStringsStayInTheirLines(*report, text);
  }
  (void)DiffReports(*report, *report, {});
  return 0;
}
