// config-delayed-wgrad: delayed weight-gradient computation with attention or the MoE router inside
// the graphs, which needs TE >= 2.12, gradient accumulation fusion and no attention bias.
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "checks/checks.h"
#include "checks/config/cuda_graph_config_check.h"
#include "core/check_ids.h"

namespace graphcheck::checks {
namespace {

class ConfigDelayedWgradCheck : public CudaGraphConfigCheck {
 public:
  ConfigDelayedWgradCheck();

 protected:
  void CheckGraphs(const ConfigDocument& config, const CudaGraphSettings& graphs, const BoundOptions& options,
                   std::vector<Finding>* findings) const override;
};

}  // namespace
namespace {

constexpr std::pair<int, int> kMinimumTe{2, 12};

// "2.10.0", "2.12.0.dev0+abc" -> {2, 10}; nullopt for anything that does not start with MAJOR.MINOR.
std::optional<std::pair<int, int>> MajorMinor(absl::string_view version) {
  std::vector<absl::string_view> parts = absl::StrSplit(version, '.');
  std::pair<int, int> result;
  if (parts.size() < 2 || !absl::SimpleAtoi(parts[0], &result.first) || !absl::SimpleAtoi(parts[1], &result.second)) {
    return std::nullopt;
  }
  return result;
}

}  // namespace

ConfigDelayedWgradCheck::ConfigDelayedWgradCheck()
    : CudaGraphConfigCheck(CheckInfo{
          check_id::kConfigDelayedWgrad,
          "delayed wgrad with attention or router graphs",
          Severity::kError,
          CheckArea::kConfiguration,
          "With delay_wgrad_compute and attn or moe_router in cuda_graph_scope, the weight-gradient pass is captured "
          "as its own graph. That needs Transformer Engine 2.12 or later, gradient accumulation fusion, and (with "
          "attn) no linear or QKV bias.",
          {{"te-version", "",
            "Transformer Engine version of the job (e.g. 2.10); when given, checked against the 2.12 minimum"}}}) {}

void ConfigDelayedWgradCheck::CheckGraphs(const ConfigDocument& config, const CudaGraphSettings& graphs,
                                          const BoundOptions& options, std::vector<Finding>* findings) const {
  const Setting delay = Lookup(config, config_keys::kDelayWgradCompute);
  if (!delay.IsTrue()) return;
  const ConfigScalar* attn = graphs.FindScope(kScopeAttn);
  const ConfigScalar* router = graphs.FindScope(kScopeMoeRouter);
  if (attn == nullptr && router == nullptr) return;
  const std::string scopes = attn != nullptr ? "attn" : "moe_router";
  auto add = [&](Location where, std::string message, std::string fix) {
    Finding finding = GraphFinding(graphs, std::move(where), std::move(message), std::move(fix));
    finding.evidence.push_back(delay.Describe());
    findings->push_back(std::move(finding));
  };

  const std::string te_version = options.Get("te-version");
  const std::optional<std::pair<int, int>> te = MajorMinor(te_version);
  if (te && *te < kMinimumTe) {
    add(delay.Where(config),
        absl::StrCat("delay_wgrad_compute with ", scopes,
                     " in cuda_graph_scope needs Transformer Engine 2.12 or "
                     "later to capture the delayed weight-gradient graph; the job uses ",
                     te_version, "."),
        absl::StrCat("Upgrade Transformer Engine to 2.12 or later, or ",
                     HowToSet(config, config_keys::kDelayWgradCompute, "false"), "."));
  }
  const Setting fusion = Lookup(config, config_keys::kGradientAccumulationFusion);
  if (fusion.AsBool() == false) {
    add(fusion.Where(config, delay.entry != nullptr ? delay.entry->position : Position{}),
        absl::StrCat(fusion.Describe(), " while delay_wgrad_compute is on with ", scopes,
                     " graphed. The captured weight-gradient graph accumulates into main_grad through the fused "
                     "kernel; without fusion Megatron Bridge refuses the configuration."),
        absl::StrCat(HowToSet(config, config_keys::kGradientAccumulationFusion, "true"), "."));
  }
  if (attn == nullptr) return;
  for (const ConfigKey* key : {&config_keys::kAddBiasLinear, &config_keys::kAddQkvBias}) {
    const Setting bias = Lookup(config, *key);
    if (!bias.applicable || !bias.IsTrue()) continue;
    add(bias.Where(config, attn->position),
        absl::StrCat(bias.Describe(),
                     " while delay_wgrad_compute is on with attn graphed. The delayed "
                     "weight-gradient graph of attention does not compute bias gradients; Megatron "
                     "Bridge refuses attention bias here."),
        absl::StrCat(HowToSet(config, *key, "false"), ", or remove attn from cuda_graph_scope."));
  }
}

std::unique_ptr<Check> NewConfigDelayedWgradCheck() { return std::make_unique<ConfigDelayedWgradCheck>(); }

}  // namespace graphcheck::checks
