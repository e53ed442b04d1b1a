// config-full-iteration-impl: the full_iteration scope only works with the local implementation
// (Megatron Core's FullCudaGraphWrapper) and only as the sole scope.
#ifndef GRAPHCHECK_VALIDATORS_CONFIG_CONFIG_FULL_ITERATION_IMPL_H_
#define GRAPHCHECK_VALIDATORS_CONFIG_CONFIG_FULL_ITERATION_IMPL_H_

#include <vector>

#include "validators/config/cuda_graph_config_check.h"

namespace graphcheck {

class ConfigFullIterationImplCheck : public CudaGraphConfigCheck {
 public:
  ConfigFullIterationImplCheck();

 protected:
  void CheckGraphs(const ConfigDocument& config, const CudaGraphSettings& graphs, const BoundOptions& options,
                   std::vector<Finding>* findings) const override;
};

}  // namespace graphcheck

#endif  // GRAPHCHECK_VALIDATORS_CONFIG_CONFIG_FULL_ITERATION_IMPL_H_
