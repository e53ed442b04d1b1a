#include "core/severity.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace graphcheck {

absl::string_view SeverityName(Severity severity) {
  switch (severity) {
    case Severity::kNote:
      return "note";
    case Severity::kWarning:
      return "warning";
    case Severity::kError:
      return "error";
  }
  return "unknown";
}

absl::StatusOr<Severity> ParseSeverity(absl::string_view name) {
  for (Severity s : {Severity::kNote, Severity::kWarning, Severity::kError}) {
    if (name == SeverityName(s)) return s;
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown severity '", name, "' (expected note, warning or error)"));
}

}  // namespace graphcheck
