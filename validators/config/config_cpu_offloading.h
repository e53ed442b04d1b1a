// config-cpu-offloading: CPU offloading with CUDA graphs, which Megatron Core rejects.
#ifndef GRAPHCHECK_VALIDATORS_CONFIG_CONFIG_CPU_OFFLOADING_H_
#define GRAPHCHECK_VALIDATORS_CONFIG_CONFIG_CPU_OFFLOADING_H_

#include <vector>

#include "validators/config/cuda_graph_config_check.h"

namespace graphcheck {

class ConfigCpuOffloadingCheck : public CudaGraphConfigCheck {
 public:
  ConfigCpuOffloadingCheck();

 protected:
  void CheckGraphs(const ConfigDocument& config, const CudaGraphSettings& graphs, const BoundOptions& options,
                   std::vector<Finding>* findings) const override;
};

}  // namespace graphcheck

#endif  // GRAPHCHECK_VALIDATORS_CONFIG_CONFIG_CPU_OFFLOADING_H_
