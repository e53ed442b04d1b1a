#include "core/report.h"

namespace graphcheck {

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
