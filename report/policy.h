// The exit-code policy: which findings fail the run (`--fail-on error|warning|never`).
#ifndef GRAPHCHECK_REPORT_POLICY_H_
#define GRAPHCHECK_REPORT_POLICY_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/report.h"

namespace graphcheck {

enum class FailOn { kError, kWarning, kNever };

absl::StatusOr<FailOn> ParseFailOn(absl::string_view name);
// The exit code a run that did not complete ended with (Report::incomplete); else kExitFindings when a finding is at
// or above the threshold, else kExitClean.
int ExitCodeForReport(const Report& report, FailOn fail_on);

}  // namespace graphcheck

#endif  // GRAPHCHECK_REPORT_POLICY_H_
