// config-full-iteration-nan-check: a full-iteration graph with loss / gradient NaN checks on; the checks
// read values on the host in the middle of the captured step.
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "checks/checks.h"
#include "checks/config/cuda_graph_config_check.h"
#include "core/check_ids.h"

namespace graphcheck::checks {
namespace {

class ConfigFullIterationNanCheckCheck : public CudaGraphConfigCheck {
 public:
  ConfigFullIterationNanCheckCheck();

 protected:
  void CheckGraphs(const ConfigDocument& config, const CudaGraphSettings& graphs, const BoundOptions& options,
                   std::vector<Finding>* findings) const override;
};

}  // namespace

ConfigFullIterationNanCheckCheck::ConfigFullIterationNanCheckCheck()
    : CudaGraphConfigCheck(CheckInfo{
          check_id::kConfigFullIterationNanCheck,
          "full_iteration graph with NaN checks on",
          Severity::kError,
          CheckArea::kConfiguration,
          "A full-iteration CUDA graph captures the whole forward-backward step, so the loss and gradient NaN checks "
          "cannot inspect values inside it. Megatron Bridge asserts that check_for_nan_in_loss is off.",
          {}}) {}

void ConfigFullIterationNanCheckCheck::CheckGraphs(const ConfigDocument& config, const CudaGraphSettings& graphs,
                                                   const BoundOptions& options, std::vector<Finding>* findings) const {
  if (!graphs.full_iteration()) return;
  // An unset check (on by default) is reported at the setting that makes it a problem.
  const ConfigScalar* scope = graphs.FindScope(kScopeFullIteration);
  const Position anchor = scope != nullptr && scope->position.line > 0 ? scope->position : graphs.anchor();
  for (const ConfigKey* key : {&config_keys::kCheckForNanInLoss, &config_keys::kCheckForNanInGrad}) {
    const Setting check = Lookup(config, *key);
    if (!check.applicable || !check.IsTrue()) continue;
    findings->push_back(GraphFinding(
        graphs, check.Where(config, anchor),
        absl::StrCat(check.Describe(),
                     " while the whole step is one graph (full_iteration). The NaN check reads the loss "
                     "or gradients on the host in the middle of the step, which a graph of the "
                     "whole step cannot do; Megatron refuses the configuration."),
        absl::StrCat(HowToSet(config, *key, "false"),
                     " (check for NaNs outside the graph, e.g. on the logged loss), or use per-layer scopes.")));
  }
}

std::unique_ptr<Check> NewConfigFullIterationNanCheckCheck() {
  return std::make_unique<ConfigFullIterationNanCheckCheck>();
}

}  // namespace graphcheck::checks
