// config-moe-scope-dropless: the moe scope on token-dropless MoE, whose expert inputs change shape from
// step to step.
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "checks/checks.h"
#include "checks/config/cuda_graph_config_check.h"
#include "core/check_ids.h"

namespace graphcheck::checks {
namespace {

class ConfigMoeScopeDroplessCheck : public CudaGraphConfigCheck {
 public:
  ConfigMoeScopeDroplessCheck();

 protected:
  void CheckGraphs(const ConfigDocument& config, const CudaGraphSettings& graphs, const BoundOptions& options,
                   std::vector<Finding>* findings) const override;
};

}  // namespace

ConfigMoeScopeDroplessCheck::ConfigMoeScopeDroplessCheck()
    : CudaGraphConfigCheck(CheckInfo{
          check_id::kConfigMoeScopeDropless,
          "moe scope on token-dropless MoE",
          Severity::kError,
          CheckArea::kConfiguration,
          "The moe scope graphs expert dispatch and computation, whose shapes are only static with drop-and-pad "
          "routing (an expert capacity factor and padding to capacity). Token-dropless MoE can graph only moe_router "
          "and moe_preprocess.",
          {}}) {}

void ConfigMoeScopeDroplessCheck::CheckGraphs(const ConfigDocument& config, const CudaGraphSettings& graphs,
                                              const BoundOptions& options, std::vector<Finding>* findings) const {
  const ConfigScalar* moe = graphs.FindScope(kScopeMoe);
  // A model without experts is config-moe-scope-without-moe's finding.
  if (moe == nullptr || Lookup(config, config_keys::kNumMoeExperts).AsNumber().value_or(0) <= 0) return;
  const Setting capacity = Lookup(config, config_keys::kMoeExpertCapacityFactor);
  const Setting pad = Lookup(config, config_keys::kMoePadExpertInputToCapacity);
  if (capacity.AsNumber().has_value() && pad.IsTrue()) return;
  Finding finding = GraphFinding(
      graphs, graphs.scope.WhereValue(config, *moe),
      "cuda_graph_scope has moe, but routing is token-dropless: each expert receives a different number of tokens "
      "every step, so the expert computation cannot be replayed with the shapes captured once.",
      absl::StrCat("Use moe_router (and moe_preprocess) instead of moe, or make routing drop-and-pad: ",
                   HowToSet(config, config_keys::kMoeExpertCapacityFactor, "1.0"), " and ",
                   HowToSet(config, config_keys::kMoePadExpertInputToCapacity, "true"), "."));
  finding.evidence.push_back(capacity.Describe());
  finding.evidence.push_back(pad.Describe());
  findings->push_back(std::move(finding));
}

std::unique_ptr<Check> NewConfigMoeScopeDroplessCheck() { return std::make_unique<ConfigMoeScopeDroplessCheck>(); }

}  // namespace graphcheck::checks
