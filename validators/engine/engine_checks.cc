#include "validators/engine/engine_checks.h"

#include <memory>
#include <vector>

#include "validators/engine/pipeline_step_failed.h"
#include "validators/numerics/numerics_forward.h"
#include "validators/numerics/numerics_grad.h"
#include "validators/numerics/numerics_loss.h"
#include "validators/numerics/numerics_nonfinite.h"
#include "validators/numerics/replay_mismatch.h"
#include "validators/rng/rng_eager_mismatch.h"
#include "validators/rng/rng_frozen_mask.h"
#include "validators/state/state_elided.h"

namespace graphcheck {

absl::Status RegisterEngineChecks(CheckRegistry* registry) {
  std::vector<std::unique_ptr<Check>> checks;
  checks.push_back(std::make_unique<PipelineStepFailedCheck>());
  checks.push_back(std::make_unique<NumericsForwardCheck>());
  checks.push_back(std::make_unique<NumericsGradCheck>());
  checks.push_back(std::make_unique<NumericsLossCheck>());
  checks.push_back(std::make_unique<NumericsNonfiniteCheck>());
  checks.push_back(std::make_unique<ReplayMismatchCheck>());
  checks.push_back(std::make_unique<StateElidedCheck>());
  checks.push_back(std::make_unique<RngFrozenMaskCheck>());
  checks.push_back(std::make_unique<RngEagerMismatchCheck>());
  return registry->AddAll(std::move(checks));
}

}  // namespace graphcheck
