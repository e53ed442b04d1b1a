// config-expandable-segments-nccl-register: the job's environment, as the configuration sets it, has
// expandable_segments with NCCL graph buffer registration; the same rule as env-expandable-segments-nccl-register.
#ifndef GRAPHCHECK_VALIDATORS_CONFIG_CONFIG_EXPANDABLE_SEGMENTS_NCCL_REGISTER_H_
#define GRAPHCHECK_VALIDATORS_CONFIG_CONFIG_EXPANDABLE_SEGMENTS_NCCL_REGISTER_H_

#include <vector>

#include "validators/config/cuda_graph_config_check.h"

namespace graphcheck {

class ConfigExpandableSegmentsNcclRegisterCheck : public CudaGraphConfigCheck {
 public:
  ConfigExpandableSegmentsNcclRegisterCheck();

 protected:
  void CheckGraphs(const ConfigDocument& config, const CudaGraphSettings& graphs, const BoundOptions& options,
                   std::vector<Finding>* findings) const override;
};

}  // namespace graphcheck

#endif  // GRAPHCHECK_VALIDATORS_CONFIG_CONFIG_EXPANDABLE_SEGMENTS_NCCL_REGISTER_H_
