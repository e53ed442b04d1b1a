// config-moe-scope-without-moe: MoE graph scopes on a model without experts.
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "checks/checks.h"
#include "checks/config/cuda_graph_config_check.h"
#include "core/check_ids.h"

namespace graphcheck::checks {
namespace {

class ConfigMoeScopeWithoutMoeCheck : public CudaGraphConfigCheck {
 public:
  ConfigMoeScopeWithoutMoeCheck();

 protected:
  void CheckGraphs(const ConfigDocument& config, const CudaGraphSettings& graphs, const BoundOptions& options,
                   std::vector<Finding>* findings) const override;
};

}  // namespace

ConfigMoeScopeWithoutMoeCheck::ConfigMoeScopeWithoutMoeCheck()
    : CudaGraphConfigCheck(
          CheckInfo{check_id::kConfigMoeScopeWithoutMoe,
                    "MoE graph scopes on a model without experts",
                    Severity::kError,
                    CheckArea::kConfiguration,
                    "cuda_graph_scope names moe, moe_router or moe_preprocess, but the model has no MoE layers "
                    "(num_moe_experts is not set), so those graphs have nothing to capture.",
                    {}}) {}

void ConfigMoeScopeWithoutMoeCheck::CheckGraphs(const ConfigDocument& config, const CudaGraphSettings& graphs,
                                                const BoundOptions& options, std::vector<Finding>* findings) const {
  const Setting experts = Lookup(config, config_keys::kNumMoeExperts);
  if (experts.AsNumber().value_or(0) > 0) return;
  std::vector<std::string> moe_scopes;
  const ConfigScalar* first = nullptr;
  for (const ConfigScalar& scope : graphs.scope.values) {
    if (scope.text != kScopeMoe && scope.text != kScopeMoeRouter && scope.text != kScopeMoePreprocess) continue;
    if (first == nullptr) first = &scope;
    moe_scopes.push_back(scope.text);
  }
  if (first == nullptr) return;
  Finding finding = GraphFinding(
      graphs, graphs.scope.WhereValue(config, *first),
      absl::StrCat("cuda_graph_scope has ", absl::StrJoin(moe_scopes, ", "),
                   " but the model has no experts: those scopes graph MoE layers, which a dense model does not have, "
                   "so Megatron finds nothing to capture for them or rejects the scope."),
      absl::StrCat("Remove ", absl::StrJoin(moe_scopes, ", "),
                   " from cuda_graph_scope (use attn / mlp for a dense model), or ",
                   HowToSet(config, config_keys::kNumMoeExperts, "N"), " if the model is meant to be MoE."));
  finding.evidence.push_back(experts.Describe());
  findings->push_back(std::move(finding));
}

std::unique_ptr<Check> NewConfigMoeScopeWithoutMoeCheck() { return std::make_unique<ConfigMoeScopeWithoutMoeCheck>(); }

}  // namespace graphcheck::checks
