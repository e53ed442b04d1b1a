// config-delayed-wgrad: delayed weight-gradient computation with attention or the MoE router inside
// the graphs, which needs TE >= 2.12, gradient accumulation fusion and no attention bias.
#ifndef GRAPHCHECK_VALIDATORS_CONFIG_CONFIG_DELAYED_WGRAD_H_
#define GRAPHCHECK_VALIDATORS_CONFIG_CONFIG_DELAYED_WGRAD_H_

#include <vector>

#include "validators/config/cuda_graph_config_check.h"

namespace graphcheck {

class ConfigDelayedWgradCheck : public CudaGraphConfigCheck {
 public:
  ConfigDelayedWgradCheck();

 protected:
  void CheckGraphs(const ConfigDocument& config, const CudaGraphSettings& graphs, const BoundOptions& options,
                   std::vector<Finding>* findings) const override;
};

}  // namespace graphcheck

#endif  // GRAPHCHECK_VALIDATORS_CONFIG_CONFIG_DELAYED_WGRAD_H_
