// config-moe-scope-exclusive: the moe and moe_router scopes together; they graph overlapping parts of
// the MoE layer.
#ifndef GRAPHCHECK_VALIDATORS_CONFIG_CONFIG_MOE_SCOPE_EXCLUSIVE_H_
#define GRAPHCHECK_VALIDATORS_CONFIG_CONFIG_MOE_SCOPE_EXCLUSIVE_H_

#include <vector>

#include "validators/config/cuda_graph_config_check.h"

namespace graphcheck {

class ConfigMoeScopeExclusiveCheck : public CudaGraphConfigCheck {
 public:
  ConfigMoeScopeExclusiveCheck();

 protected:
  void CheckGraphs(const ConfigDocument& config, const CudaGraphSettings& graphs, const BoundOptions& options,
                   std::vector<Finding>* findings) const override;
};

}  // namespace graphcheck

#endif  // GRAPHCHECK_VALIDATORS_CONFIG_CONFIG_MOE_SCOPE_EXCLUSIVE_H_
