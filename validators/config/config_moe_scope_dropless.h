// config-moe-scope-dropless: the moe scope on token-dropless MoE, whose expert inputs change shape from
// step to step.
#ifndef GRAPHCHECK_VALIDATORS_CONFIG_CONFIG_MOE_SCOPE_DROPLESS_H_
#define GRAPHCHECK_VALIDATORS_CONFIG_CONFIG_MOE_SCOPE_DROPLESS_H_

#include <vector>

#include "validators/config/cuda_graph_config_check.h"

namespace graphcheck {

class ConfigMoeScopeDroplessCheck : public CudaGraphConfigCheck {
 public:
  ConfigMoeScopeDroplessCheck();

 protected:
  void CheckGraphs(const ConfigDocument& config, const CudaGraphSettings& graphs, const BoundOptions& options,
                   std::vector<Finding>* findings) const override;
};

}  // namespace graphcheck

#endif  // GRAPHCHECK_VALIDATORS_CONFIG_CONFIG_MOE_SCOPE_DROPLESS_H_
