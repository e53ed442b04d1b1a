#include "core/report.h"

#include "absl/strings/str_cat.h"

namespace graphcheck {

std::string Metric::ScopedName() const {
  std::string scoped = scope.pid != 0 ? absl::StrCat("pid", scope.pid, ".", name) : name;
  if (!scope.origin.empty()) absl::StrAppend(&scoped, ".", scope.origin);
  if (scope.extreme != MetricScope::Extreme::kNone) {
    absl::StrAppend(&scoped, scope.extreme == MetricScope::Extreme::kMin ? ".min" : ".max");
  }
  return scoped;
}

absl::string_view StepStatusName(StepStatus status) {
  switch (status) {
    case StepStatus::kOk:
      return "ok";
    case StepStatus::kFailed:
      return "failed";
    case StepStatus::kSkipped:
      return "skipped";
  }
  return "unknown";
}

}  // namespace graphcheck
