// config-moe-scope-without-moe: MoE graph scopes on a model without experts.
#ifndef GRAPHCHECK_VALIDATORS_CONFIG_CONFIG_MOE_SCOPE_WITHOUT_MOE_H_
#define GRAPHCHECK_VALIDATORS_CONFIG_CONFIG_MOE_SCOPE_WITHOUT_MOE_H_

#include <vector>

#include "validators/config/cuda_graph_config_check.h"

namespace graphcheck {

class ConfigMoeScopeWithoutMoeCheck : public CudaGraphConfigCheck {
 public:
  ConfigMoeScopeWithoutMoeCheck();

 protected:
  void CheckGraphs(const ConfigDocument& config, const CudaGraphSettings& graphs, const BoundOptions& options,
                   std::vector<Finding>* findings) const override;
};

}  // namespace graphcheck

#endif  // GRAPHCHECK_VALIDATORS_CONFIG_CONFIG_MOE_SCOPE_WITHOUT_MOE_H_
