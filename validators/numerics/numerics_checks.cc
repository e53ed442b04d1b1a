#include "validators/numerics/numerics_checks.h"

#include <memory>

#include "validators/numerics/numerics_loss.h"

namespace graphcheck {

absl::Status RegisterNumericsChecks(CheckRegistry* registry) {
  return registry->Add(std::make_unique<NumericsLossCheck>());
}

}  // namespace graphcheck
