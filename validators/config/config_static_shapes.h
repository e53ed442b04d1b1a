// config-static-shapes: settings that change tensor shapes between steps (variable sequence lengths,
// batch-size ramp-up, unpadded packed sequences); a graph replays the shapes it captured.
#ifndef GRAPHCHECK_VALIDATORS_CONFIG_CONFIG_STATIC_SHAPES_H_
#define GRAPHCHECK_VALIDATORS_CONFIG_CONFIG_STATIC_SHAPES_H_

#include <vector>

#include "validators/config/cuda_graph_config_check.h"

namespace graphcheck {

class ConfigStaticShapesCheck : public CudaGraphConfigCheck {
 public:
  ConfigStaticShapesCheck();

 protected:
  void CheckGraphs(const ConfigDocument& config, const CudaGraphSettings& graphs, const BoundOptions& options,
                   std::vector<Finding>* findings) const override;
};

}  // namespace graphcheck

#endif  // GRAPHCHECK_VALIDATORS_CONFIG_CONFIG_STATIC_SHAPES_H_
