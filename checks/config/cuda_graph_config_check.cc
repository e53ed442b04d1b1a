#include "checks/config/cuda_graph_config_check.h"

#include "checks/config/config_document.h"

namespace graphcheck::checks {

void CudaGraphConfigCheck::Read(const ConfigDocument& config, const BoundOptions& options,
                                std::vector<Finding>* findings) const {
  const CudaGraphSettings graphs = CudaGraphSettings::From(config);
  if (graphs.enabled()) CheckGraphs(config, graphs, options, findings);
}

Finding CudaGraphConfigCheck::GraphFinding(const CudaGraphSettings& graphs, Location where, std::string message,
                                           std::string fix) const {
  Finding finding = NewFinding();
  finding.where = std::move(where);
  finding.message = std::move(message);
  finding.fix = std::move(fix);
  finding.evidence.push_back(graphs.impl.Describe());
  return finding;
}

}  // namespace graphcheck::checks
