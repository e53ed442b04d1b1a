#include "validators/engine/engine_checks.h"

#include <memory>
#include <vector>

#include "validators/engine/numerics_loss.h"
#include "validators/engine/pipeline_step_failed.h"

namespace graphcheck {

absl::Status RegisterEngineChecks(CheckRegistry* registry) {
  std::vector<std::unique_ptr<Check>> checks;
  checks.push_back(std::make_unique<NumericsLossCheck>());
  checks.push_back(std::make_unique<PipelineStepFailedCheck>());
  for (std::unique_ptr<Check>& check : checks) {
    if (absl::Status status = registry->Add(std::move(check)); !status.ok()) return status;
  }
  return absl::OkStatus();
}

}  // namespace graphcheck
