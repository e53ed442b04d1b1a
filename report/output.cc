#include "report/output.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "core/file_io.h"
#include "report/bounded.h"
#include "report/html.h"
#include "report/json.h"
#include "report/junit.h"
#include "report/markdown.h"
#include "report/sarif.h"
#include "report/text.h"

namespace graphcheck {

absl::StatusOr<ReportFormat> ParseReportFormat(absl::string_view name) {
  if (name == "text") return ReportFormat::kText;
  if (name == "json") return ReportFormat::kJson;
  if (name == "junit") return ReportFormat::kJunit;
  if (name == "sarif") return ReportFormat::kSarif;
  if (name == "markdown") return ReportFormat::kMarkdown;
  if (name == "html") return ReportFormat::kHtml;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown format '", name, "' (expected text, json, junit, sarif, markdown or html)"));
}

std::string RenderReport(const Report& unbounded, const RenderOptions& options) {
  const Report report = BoundedReport(unbounded);
  switch (options.format) {
    case ReportFormat::kJson:
      return ReportToJson(report);
    case ReportFormat::kJunit:
      return RenderJunit(report, options.fail_on);
    case ReportFormat::kSarif:
      return RenderSarif(report, options.checks, options.sarif_paths);
    case ReportFormat::kMarkdown:
      return RenderMarkdown(report);
    case ReportFormat::kHtml:
      return RenderHtml(report);
    case ReportFormat::kText:
      break;
  }
  TextOptions text;
  text.color = options.color;
  return RenderText(report, text);
}

absl::Status WriteOutput(const std::string& path, absl::string_view contents) {
  if (path.empty() || path == "-") {
    if (std::fwrite(contents.data(), 1, contents.size(), stdout) != contents.size() || std::fflush(stdout) != 0) {
      return absl::InvalidArgumentError(absl::StrCat("cannot write the report to stdout: ", std::strerror(errno)));
    }
    return absl::OkStatus();
  }
  return WriteFileAtomically(path, contents);
}

}  // namespace graphcheck
