// The report's JSON form: the saved, versioned format (schema in docs/report-schema.md).
#ifndef GRAPHCHECK_REPORT_JSON_H_
#define GRAPHCHECK_REPORT_JSON_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/report.h"
#include "report/baseline.h"

namespace graphcheck {

// Bump the major number on an incompatible change; readers reject other majors.
inline constexpr char kReportSchema[] = "graphcheck.report/1";

std::string ReportToJson(const Report& report);
// InvalidArgument naming what is wrong (not JSON, line and column; wrong schema; a missing or mistyped field).
absl::StatusOr<Report> ReportFromJson(absl::string_view text);

// `graphcheck diff --format json`: the findings that appeared and went away (as in a report, with their
// fingerprints) and the metrics that moved.
inline constexpr char kDiffSchema[] = "graphcheck.diff/1";
std::string ReportDiffToJson(const ReportDiff& diff);

}  // namespace graphcheck

#endif  // GRAPHCHECK_REPORT_JSON_H_
