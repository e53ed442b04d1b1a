// config-moe-recompute-router: MoE recomputation with the moe_router scope under the Transformer Engine
// implementation, which Megatron Core rejects.
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "checks/checks.h"
#include "checks/config/cuda_graph_config_check.h"
#include "core/check_ids.h"

namespace graphcheck::checks {
namespace {

class ConfigMoeRecomputeRouterCheck : public CudaGraphConfigCheck {
 public:
  ConfigMoeRecomputeRouterCheck();

 protected:
  void CheckGraphs(const ConfigDocument& config, const CudaGraphSettings& graphs, const BoundOptions& options,
                   std::vector<Finding>* findings) const override;
};

}  // namespace

ConfigMoeRecomputeRouterCheck::ConfigMoeRecomputeRouterCheck()
    : CudaGraphConfigCheck(CheckInfo{
          check_id::kConfigMoeRecomputeRouter,
          "MoE recomputation with the moe_router scope",
          Severity::kError,
          CheckArea::kConfiguration,
          "Selective recomputation of the MoE module re-runs the router during backward, outside the graph that "
          "captured it; Megatron Core rejects recompute_modules with moe together with the moe_router scope under "
          "the transformer_engine implementation.",
          {}}) {}

void ConfigMoeRecomputeRouterCheck::CheckGraphs(const ConfigDocument& config, const CudaGraphSettings& graphs,
                                                const BoundOptions& options, std::vector<Finding>* findings) const {
  if (graphs.impl_name != kImplTransformerEngine || !graphs.HasScope(kScopeMoeRouter)) return;
  const Setting granularity = Lookup(config, config_keys::kRecomputeGranularity);
  const Setting modules = Lookup(config, config_keys::kRecomputeModules);
  const ConfigScalar* moe = modules.FindValue("moe");
  if (granularity.AsString() != "selective" || moe == nullptr) return;
  Finding finding = GraphFinding(
      graphs, modules.WhereValue(config, *moe),
      "recompute_modules has moe while cuda_graph_scope has moe_router under the transformer_engine implementation. "
      "Recomputing the MoE layer re-runs its router in backward outside the captured router graph; Megatron Core "
      "raises at start-up.",
      "Remove moe from recompute_modules (recompute e.g. moe_act or core_attn instead), or remove moe_router from "
      "cuda_graph_scope.");
  finding.evidence.push_back(granularity.Describe());
  findings->push_back(std::move(finding));
}

std::unique_ptr<Check> NewConfigMoeRecomputeRouterCheck() { return std::make_unique<ConfigMoeRecomputeRouterCheck>(); }

}  // namespace graphcheck::checks
