// Rendering a report in a chosen format (text, JSON, JUnit XML, SARIF, Markdown, HTML) and writing it out whole: a file
// is written to a temporary name and renamed, so a reader never sees half a report.
#ifndef GRAPHCHECK_REPORT_OUTPUT_H_
#define GRAPHCHECK_REPORT_OUTPUT_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/registry.h"
#include "core/report.h"
#include "report/policy.h"
#include "report/sarif.h"

namespace graphcheck {

enum class ReportFormat { kText, kJson, kJunit, kSarif, kMarkdown, kHtml };
absl::StatusOr<ReportFormat> ParseReportFormat(absl::string_view name);

struct RenderOptions {
  ReportFormat format = ReportFormat::kText;
  FailOn fail_on = FailOn::kError;
  bool color = false;                     // text only
  const CheckRegistry* checks = nullptr;  // SARIF rule metadata; may be null
  SarifPaths sarif_paths;                 // SARIF: the source root and working directory
};
std::string RenderReport(const Report& report, const RenderOptions& options);

// Writes `contents` to `path` whole (core/file_io.h: WriteFileAtomically). "-" or "" means stdout.
absl::Status WriteOutput(const std::string& path, absl::string_view contents);

}  // namespace graphcheck

#endif  // GRAPHCHECK_REPORT_OUTPUT_H_
