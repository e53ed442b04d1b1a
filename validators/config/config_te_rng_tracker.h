// config-te-rng-tracker: CUDA graphs on without Transformer Engine's RNG tracker, which Megatron
// requires so that dropout masks come from a graph-safe generator.
#ifndef GRAPHCHECK_VALIDATORS_CONFIG_CONFIG_TE_RNG_TRACKER_H_
#define GRAPHCHECK_VALIDATORS_CONFIG_CONFIG_TE_RNG_TRACKER_H_

#include <vector>

#include "validators/config/cuda_graph_config_check.h"

namespace graphcheck {

class ConfigTeRngTrackerCheck : public CudaGraphConfigCheck {
 public:
  ConfigTeRngTrackerCheck();

 protected:
  void CheckGraphs(const ConfigDocument& config, const CudaGraphSettings& graphs, const BoundOptions& options,
                   std::vector<Finding>* findings) const override;
};

}  // namespace graphcheck

#endif  // GRAPHCHECK_VALIDATORS_CONFIG_CONFIG_TE_RNG_TRACKER_H_
