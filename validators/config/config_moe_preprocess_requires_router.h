// config-moe-preprocess-requires-router: the moe_preprocess scope without moe_router; the
// preprocess graph consumes the router graph's outputs.
#ifndef GRAPHCHECK_VALIDATORS_CONFIG_CONFIG_MOE_PREPROCESS_REQUIRES_ROUTER_H_
#define GRAPHCHECK_VALIDATORS_CONFIG_CONFIG_MOE_PREPROCESS_REQUIRES_ROUTER_H_

#include <vector>

#include "validators/config/cuda_graph_config_check.h"

namespace graphcheck {

class ConfigMoePreprocessRequiresRouterCheck : public CudaGraphConfigCheck {
 public:
  ConfigMoePreprocessRequiresRouterCheck();

 protected:
  void CheckGraphs(const ConfigDocument& config, const CudaGraphSettings& graphs, const BoundOptions& options,
                   std::vector<Finding>* findings) const override;
};

}  // namespace graphcheck

#endif  // GRAPHCHECK_VALIDATORS_CONFIG_CONFIG_MOE_PREPROCESS_REQUIRES_ROUTER_H_
