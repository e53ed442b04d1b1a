// Registration of the environment checks.
#ifndef GRAPHCHECK_VALIDATORS_ENVIRONMENT_CHECKS_H_
#define GRAPHCHECK_VALIDATORS_ENVIRONMENT_CHECKS_H_

#include "absl/status/status.h"
#include "core/registry.h"

namespace graphcheck {

absl::Status RegisterEnvironmentChecks(CheckRegistry* registry);

}  // namespace graphcheck

#endif  // GRAPHCHECK_VALIDATORS_ENVIRONMENT_CHECKS_H_
