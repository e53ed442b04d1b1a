// Base of the configuration rules that apply only when a configuration turns CUDA graphs on: it works out the graph
// settings once, skips configurations without graphs, and builds findings that name the setting that turned graphs
// on as evidence.
#ifndef GRAPHCHECK_CHECKS_CONFIG_CUDA_GRAPH_CONFIG_CHECK_H_
#define GRAPHCHECK_CHECKS_CONFIG_CUDA_GRAPH_CONFIG_CHECK_H_

#include <string>
#include <vector>

#include "checks/config/config_document.h"
#include "checks/config/cuda_graph_settings.h"
#include "core/check.h"

namespace graphcheck::checks {

class CudaGraphConfigCheck : public CheckOf<ConfigDocument> {
 public:
  using CheckOf::CheckOf;

 protected:
  void Read(const ConfigDocument& config, const BoundOptions& options, std::vector<Finding>* findings) const final;
  virtual void CheckGraphs(const ConfigDocument& config, const CudaGraphSettings& graphs, const BoundOptions& options,
                           std::vector<Finding>* findings) const = 0;

  // A finding at `where`, with the graph implementation setting as the first piece of evidence.
  Finding GraphFinding(const CudaGraphSettings& graphs, Location where, std::string message, std::string fix) const;
};

}  // namespace graphcheck::checks

#endif  // GRAPHCHECK_CHECKS_CONFIG_CUDA_GRAPH_CONFIG_CHECK_H_
