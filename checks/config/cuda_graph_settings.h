// What a configuration says about CUDA graphs: the implementation (cuda_graph_impl, or the legacy enable / external
// switches) and the scope list, the two settings that every configuration rule starts from.
#ifndef GRAPHCHECK_CHECKS_CONFIG_CUDA_GRAPH_SETTINGS_H_
#define GRAPHCHECK_CHECKS_CONFIG_CUDA_GRAPH_SETTINGS_H_

#include <string>

#include "absl/strings/string_view.h"
#include "checks/config/config_keys.h"

namespace graphcheck::checks {

// Values Megatron Bridge accepts (scripts/performance/argument_parser.py) and Megatron Core's CudaGraphScope.
inline constexpr absl::string_view kImplNone = "none";
inline constexpr absl::string_view kImplLocal = "local";
inline constexpr absl::string_view kImplTransformerEngine = "transformer_engine";
// Megatron Core 0.19's spelling of the whole-step graph (FullCudaGraphWrapper); the older one is the local
// implementation with the full_iteration scope, which 0.19 still accepts and migrates.
inline constexpr absl::string_view kImplFullIteration = "full_iteration";
inline constexpr absl::string_view kKnownImpls[] = {kImplNone, kImplLocal, kImplTransformerEngine, kImplFullIteration};
inline constexpr absl::string_view kScopeFullIteration = "full_iteration";
inline constexpr absl::string_view kScopeAttn = "attn";
inline constexpr absl::string_view kScopeMoe = "moe";
inline constexpr absl::string_view kScopeMoeRouter = "moe_router";
inline constexpr absl::string_view kScopeMoePreprocess = "moe_preprocess";
inline constexpr absl::string_view kKnownScopes[] = {kScopeFullIteration, kScopeAttn,          "mlp",  kScopeMoe,
                                                     kScopeMoeRouter,     kScopeMoePreprocess, "mamba"};

struct CudaGraphSettings {
  Setting impl;           // the setting that turned graphs on (cuda_graph_impl, or a legacy switch)
  std::string impl_name;  // "none", "local", "transformer_engine", or whatever unknown name was written
  Setting scope;

  static CudaGraphSettings From(const ConfigDocument& document);
  bool enabled() const { return impl_name != kImplNone; }
  // The scope list entry with this name, or nullptr.
  const ConfigScalar* FindScope(absl::string_view name) const { return scope.FindValue(name); }
  bool HasScope(absl::string_view name) const { return FindScope(name) != nullptr; }
  // The whole step is one graph: cuda_graph_impl full_iteration, or the full_iteration scope.
  bool full_iteration() const { return impl_name == kImplFullIteration || HasScope(kScopeFullIteration); }
  // Where findings about a setting that is missing point: the line that turned graphs on.
  Position anchor() const { return impl.entry != nullptr ? impl.entry->position : Position{}; }
};

}  // namespace graphcheck::checks

#endif  // GRAPHCHECK_CHECKS_CONFIG_CUDA_GRAPH_SETTINGS_H_
