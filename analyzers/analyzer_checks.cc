#include "analyzers/analyzer_checks.h"

#include <memory>
#include <vector>

namespace graphcheck {

absl::Status RegisterAnalyzerChecks(CheckRegistry* registry) {
  std::vector<std::unique_ptr<Check>> checks;
  for (std::unique_ptr<Check>& check : checks) {
    if (absl::Status status = registry->Add(std::move(check)); !status.ok()) return status;
  }
  return absl::OkStatus();
}

}  // namespace graphcheck
