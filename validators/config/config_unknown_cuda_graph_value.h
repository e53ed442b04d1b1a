// config-unknown-cuda-graph-value: a cuda_graph_impl or cuda_graph_scope name that Megatron does not know
// (a typo such as transformer-engine), or a warmup step count that is not a count.
#ifndef GRAPHCHECK_VALIDATORS_CONFIG_CONFIG_UNKNOWN_CUDA_GRAPH_VALUE_H_
#define GRAPHCHECK_VALIDATORS_CONFIG_CONFIG_UNKNOWN_CUDA_GRAPH_VALUE_H_

#include <vector>

#include "validators/config/cuda_graph_config_check.h"

namespace graphcheck {

class ConfigUnknownCudaGraphValueCheck : public CudaGraphConfigCheck {
 public:
  ConfigUnknownCudaGraphValueCheck();

 protected:
  void CheckGraphs(const ConfigDocument& config, const CudaGraphSettings& graphs, const BoundOptions& options,
                   std::vector<Finding>* findings) const override;
};

}  // namespace graphcheck

#endif  // GRAPHCHECK_VALIDATORS_CONFIG_CONFIG_UNKNOWN_CUDA_GRAPH_VALUE_H_
