// config-full-iteration-impl: the full_iteration scope only works with the local implementation
// (Megatron Core's FullCudaGraphWrapper) and only as the sole scope.
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "checks/checks.h"
#include "checks/config/cuda_graph_config_check.h"
#include "core/check_ids.h"

namespace graphcheck::checks {
namespace {

class ConfigFullIterationImplCheck : public CudaGraphConfigCheck {
 public:
  ConfigFullIterationImplCheck();

 protected:
  void CheckGraphs(const ConfigDocument& config, const CudaGraphSettings& graphs, const BoundOptions& options,
                   std::vector<Finding>* findings) const override;
};

}  // namespace

ConfigFullIterationImplCheck::ConfigFullIterationImplCheck()
    : CudaGraphConfigCheck(CheckInfo{
          check_id::kConfigFullIterationImpl,
          "full_iteration scope with the wrong implementation or with other scopes",
          Severity::kError,
          CheckArea::kConfiguration,
          "The full_iteration scope graphs the whole forward-backward step through Megatron Core's "
          "FullCudaGraphWrapper, which only the local implementation provides, and it cannot be combined with "
          "per-layer scopes.",
          {}}) {}

void ConfigFullIterationImplCheck::CheckGraphs(const ConfigDocument& config, const CudaGraphSettings& graphs,
                                               const BoundOptions& options, std::vector<Finding>* findings) const {
  const ConfigScalar* full = graphs.FindScope(kScopeFullIteration);
  if (full == nullptr) return;
  if (graphs.impl_name != kImplLocal && graphs.impl_name != kImplFullIteration) {
    findings->push_back(GraphFinding(
        graphs, graphs.impl.Where(config),
        absl::StrCat("cuda_graph_scope has full_iteration but cuda_graph_impl is ", graphs.impl_name,
                     ". Only the local implementation wraps the whole step (FullCudaGraphWrapper); Transformer "
                     "Engine's make_graphed_callables graphs individual layers, so the scope is rejected or "
                     "silently ignored."),
        absl::StrCat(HowToSet(config, config_keys::kCudaGraphImpl, kImplLocal),
                     ", or replace full_iteration with per-layer scopes (attn, mlp, ...).")));
  }
  std::vector<std::string> others;
  for (const ConfigScalar& scope : graphs.scope.values) {
    if (scope.text != kScopeFullIteration) others.push_back(scope.text);
  }
  if (!others.empty()) {
    findings->push_back(GraphFinding(
        graphs, graphs.scope.WhereValue(config, *full),
        absl::StrCat("full_iteration is listed together with ", absl::StrJoin(others, ", "),
                     ". A full-iteration graph already contains every layer, so it must be the only scope; "
                     "Megatron rejects the combination."),
        absl::StrCat(HowToSet(config, config_keys::kCudaGraphScope, "[full_iteration]"),
                     " alone, or drop full_iteration and keep the per-layer scopes.")));
  }
}

std::unique_ptr<Check> NewConfigFullIterationImplCheck() { return std::make_unique<ConfigFullIterationImplCheck>(); }

}  // namespace graphcheck::checks
