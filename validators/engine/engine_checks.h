// Registration of the checks over what `graphcheck check`'s engine ran and measured.
#ifndef GRAPHCHECK_VALIDATORS_ENGINE_ENGINE_CHECKS_H_
#define GRAPHCHECK_VALIDATORS_ENGINE_ENGINE_CHECKS_H_

#include "absl/status/status.h"
#include "core/registry.h"

namespace graphcheck {

absl::Status RegisterEngineChecks(CheckRegistry* registry);

}  // namespace graphcheck

#endif  // GRAPHCHECK_VALIDATORS_ENGINE_ENGINE_CHECKS_H_
