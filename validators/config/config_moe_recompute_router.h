// config-moe-recompute-router: MoE recomputation with the moe_router scope under the Transformer Engine
// implementation, which Megatron Core rejects.
#ifndef GRAPHCHECK_VALIDATORS_CONFIG_CONFIG_MOE_RECOMPUTE_ROUTER_H_
#define GRAPHCHECK_VALIDATORS_CONFIG_CONFIG_MOE_RECOMPUTE_ROUTER_H_

#include <vector>

#include "validators/config/cuda_graph_config_check.h"

namespace graphcheck {

class ConfigMoeRecomputeRouterCheck : public CudaGraphConfigCheck {
 public:
  ConfigMoeRecomputeRouterCheck();

 protected:
  void CheckGraphs(const ConfigDocument& config, const CudaGraphSettings& graphs, const BoundOptions& options,
                   std::vector<Finding>* findings) const override;
};

}  // namespace graphcheck

#endif  // GRAPHCHECK_VALIDATORS_CONFIG_CONFIG_MOE_RECOMPUTE_ROUTER_H_
