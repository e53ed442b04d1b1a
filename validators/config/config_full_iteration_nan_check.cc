#include "validators/config/config_full_iteration_nan_check.h"

#include "absl/strings/str_cat.h"

namespace graphcheck {

ConfigFullIterationNanCheckCheck::ConfigFullIterationNanCheckCheck()
    : CudaGraphConfigCheck(CheckInfo{
          "config-full-iteration-nan-check",
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

}  // namespace graphcheck
