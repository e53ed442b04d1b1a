// Registration of the configuration checks (Megatron Bridge / Megatron Core CUDA-graph rules) and the capture-order
// check, run by `graphcheck lint --config` and `--order`.
#ifndef GRAPHCHECK_VALIDATORS_CONFIG_CONFIG_CHECKS_H_
#define GRAPHCHECK_VALIDATORS_CONFIG_CONFIG_CHECKS_H_

#include "absl/status/status.h"
#include "core/registry.h"

namespace graphcheck {

absl::Status RegisterConfigurationChecks(CheckRegistry* registry);

}  // namespace graphcheck

#endif  // GRAPHCHECK_VALIDATORS_CONFIG_CONFIG_CHECKS_H_
