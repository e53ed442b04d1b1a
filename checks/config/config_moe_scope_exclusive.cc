// config-moe-scope-exclusive: the moe and moe_router scopes together; they graph overlapping parts of
// the MoE layer.
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "checks/checks.h"
#include "checks/config/cuda_graph_config_check.h"
#include "core/check_ids.h"

namespace graphcheck::checks {
namespace {

class ConfigMoeScopeExclusiveCheck : public CudaGraphConfigCheck {
 public:
  ConfigMoeScopeExclusiveCheck();

 protected:
  void CheckGraphs(const ConfigDocument& config, const CudaGraphSettings& graphs, const BoundOptions& options,
                   std::vector<Finding>* findings) const override;
};

}  // namespace

ConfigMoeScopeExclusiveCheck::ConfigMoeScopeExclusiveCheck()
    : CudaGraphConfigCheck(CheckInfo{
          check_id::kConfigMoeScopeExclusive,
          "moe and moe_router scopes together",
          Severity::kError,
          CheckArea::kConfiguration,
          "The moe scope graphs the whole MoE layer (drop-and-pad routing); moe_router graphs only the router of a "
          "token-dropless layer. They cover the same module and must not be combined.",
          {}}) {}

void ConfigMoeScopeExclusiveCheck::CheckGraphs(const ConfigDocument& config, const CudaGraphSettings& graphs,
                                               const BoundOptions& options, std::vector<Finding>* findings) const {
  const ConfigScalar* moe = graphs.FindScope(kScopeMoe);
  const ConfigScalar* router = graphs.FindScope(kScopeMoeRouter);
  if (moe == nullptr || router == nullptr) return;
  findings->push_back(GraphFinding(
      graphs, graphs.scope.WhereValue(config, *router),
      "cuda_graph_scope lists both moe and moe_router. The moe scope already graphs the router as part of the whole "
      "MoE layer; graphing it twice is rejected by Megatron.",
      "Keep moe for drop-and-pad MoE (fixed expert capacity), or moe_router (with moe_preprocess) for "
      "token-dropless MoE; remove the other from cuda_graph_scope."));
}

std::unique_ptr<Check> NewConfigMoeScopeExclusiveCheck() { return std::make_unique<ConfigMoeScopeExclusiveCheck>(); }

}  // namespace graphcheck::checks
