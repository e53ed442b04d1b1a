// config-moe-preprocess-requires-router: the moe_preprocess scope without moe_router; the
// preprocess graph consumes the router graph's outputs.
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "checks/checks.h"
#include "checks/config/cuda_graph_config_check.h"
#include "core/check_ids.h"

namespace graphcheck::checks {
namespace {

class ConfigMoePreprocessRequiresRouterCheck : public CudaGraphConfigCheck {
 public:
  ConfigMoePreprocessRequiresRouterCheck();

 protected:
  void CheckGraphs(const ConfigDocument& config, const CudaGraphSettings& graphs, const BoundOptions& options,
                   std::vector<Finding>* findings) const override;
};

}  // namespace

ConfigMoePreprocessRequiresRouterCheck::ConfigMoePreprocessRequiresRouterCheck()
    : CudaGraphConfigCheck(CheckInfo{
          check_id::kConfigMoePreprocessRequiresRouter,
          "moe_preprocess scope without moe_router",
          Severity::kError,
          CheckArea::kConfiguration,
          "The moe_preprocess scope extends the router's graph with the token-dispatch preprocessing; it needs the "
          "moe_router scope as well.",
          {}}) {}

void ConfigMoePreprocessRequiresRouterCheck::CheckGraphs(const ConfigDocument& config, const CudaGraphSettings& graphs,
                                                         const BoundOptions& options,
                                                         std::vector<Finding>* findings) const {
  const ConfigScalar* preprocess = graphs.FindScope(kScopeMoePreprocess);
  if (preprocess == nullptr || graphs.HasScope(kScopeMoeRouter)) return;
  findings->push_back(GraphFinding(
      graphs, graphs.scope.WhereValue(config, *preprocess),
      "cuda_graph_scope has moe_preprocess without moe_router. The preprocessing graph is captured together with "
      "the router's and consumes its outputs; Megatron rejects moe_preprocess on its own.",
      "Add moe_router to cuda_graph_scope (e.g. [attn, moe_router, moe_preprocess]), or remove moe_preprocess."));
}

std::unique_ptr<Check> NewConfigMoePreprocessRequiresRouterCheck() {
  return std::make_unique<ConfigMoePreprocessRequiresRouterCheck>();
}

}  // namespace graphcheck::checks
