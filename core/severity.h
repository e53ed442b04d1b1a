// Severity of a finding and its parsing; shared by checks, reports and the exit-code policy.
#ifndef GRAPHCHECK_CORE_SEVERITY_H_
#define GRAPHCHECK_CORE_SEVERITY_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace graphcheck {

// Ordered: a larger value is more severe.
enum class Severity { kNote = 0, kWarning = 1, kError = 2 };

absl::string_view SeverityName(Severity severity);  // "note", "warning", "error"
absl::StatusOr<Severity> ParseSeverity(absl::string_view name);

}  // namespace graphcheck

#endif  // GRAPHCHECK_CORE_SEVERITY_H_
