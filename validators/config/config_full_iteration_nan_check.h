// config-full-iteration-nan-check: a full-iteration graph with loss / gradient NaN checks on; the checks
// read values on the host in the middle of the captured step.
#ifndef GRAPHCHECK_VALIDATORS_CONFIG_CONFIG_FULL_ITERATION_NAN_CHECK_H_
#define GRAPHCHECK_VALIDATORS_CONFIG_CONFIG_FULL_ITERATION_NAN_CHECK_H_

#include <vector>

#include "validators/config/cuda_graph_config_check.h"

namespace graphcheck {

class ConfigFullIterationNanCheckCheck : public CudaGraphConfigCheck {
 public:
  ConfigFullIterationNanCheckCheck();

 protected:
  void CheckGraphs(const ConfigDocument& config, const CudaGraphSettings& graphs, const BoundOptions& options,
                   std::vector<Finding>* findings) const override;
};

}  // namespace graphcheck

#endif  // GRAPHCHECK_VALIDATORS_CONFIG_CONFIG_FULL_ITERATION_NAN_CHECK_H_
