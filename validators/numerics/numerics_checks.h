// Registration of the numerics checks (over what `graphcheck check`'s engine measured).
#ifndef GRAPHCHECK_VALIDATORS_NUMERICS_NUMERICS_CHECKS_H_
#define GRAPHCHECK_VALIDATORS_NUMERICS_NUMERICS_CHECKS_H_

#include "absl/status/status.h"
#include "core/registry.h"

namespace graphcheck {

absl::Status RegisterNumericsChecks(CheckRegistry* registry);

}  // namespace graphcheck

#endif  // GRAPHCHECK_VALIDATORS_NUMERICS_NUMERICS_CHECKS_H_
