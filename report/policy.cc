#include "report/policy.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/exit_code.h"

namespace graphcheck {

absl::StatusOr<FailOn> ParseFailOn(absl::string_view name) {
  if (name == "error") return FailOn::kError;
  if (name == "warning") return FailOn::kWarning;
  if (name == "never") return FailOn::kNever;
  return absl::InvalidArgumentError(absl::StrCat("--fail-on '", name, "' must be error, warning or never"));
}

int ExitCodeForReport(const Report& report, FailOn fail_on) {
  if (report.incomplete) return report.incomplete->exit_code;
  if (fail_on == FailOn::kNever) return kExitClean;
  const Severity threshold = fail_on == FailOn::kError ? Severity::kError : Severity::kWarning;
  const bool fails = std::any_of(report.findings.begin(), report.findings.end(),
                                 [&](const Finding& f) { return f.severity >= threshold; });
  return fails ? kExitFindings : kExitClean;
}

}  // namespace graphcheck
