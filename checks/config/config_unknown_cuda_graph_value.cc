// config-unknown-cuda-graph-value: a cuda_graph_impl or cuda_graph_scope name that Megatron does not know
// (a typo such as transformer-engine), or a warmup step count that is not a count.
#include <algorithm>
#include <memory>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/types/span.h"
#include "checks/checks.h"
#include "checks/config/cuda_graph_config_check.h"
#include "core/check_ids.h"

namespace graphcheck::checks {
namespace {

class ConfigUnknownCudaGraphValueCheck : public CudaGraphConfigCheck {
 public:
  ConfigUnknownCudaGraphValueCheck();

 protected:
  void CheckGraphs(const ConfigDocument& config, const CudaGraphSettings& graphs, const BoundOptions& options,
                   std::vector<Finding>* findings) const override;
};

}  // namespace
namespace {

// Edit distance after folding case and '-' to '_', so "transformer-engine" and "Attn" find their names.
size_t Distance(absl::string_view a_raw, absl::string_view b) {
  const std::string a = absl::StrReplaceAll(absl::AsciiStrToLower(a_raw), {{"-", "_"}});
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// " Did you mean X?" when a known name is close; "" otherwise.
std::string Suggestion(absl::string_view name, absl::Span<const absl::string_view> known) {
  const absl::string_view* best = nullptr;
  size_t best_distance = 0;
  for (const absl::string_view& candidate : known) {
    const size_t distance = Distance(name, candidate);
    if (best == nullptr || distance < best_distance) {
      best = &candidate;
      best_distance = distance;
    }
  }
  if (best == nullptr || best_distance > std::max<size_t>(2, best->size() / 3)) return "";
  return absl::StrCat(" Did you mean ", *best, "?");
}

}  // namespace

ConfigUnknownCudaGraphValueCheck::ConfigUnknownCudaGraphValueCheck()
    : CudaGraphConfigCheck(CheckInfo{
          check_id::kConfigUnknownCudaGraphValue,
          "unknown CUDA-graph implementation or scope name",
          Severity::kError,
          CheckArea::kConfiguration,
          "cuda_graph_impl must be none, local, transformer_engine or full_iteration; cuda_graph_scope names must be "
          "among "
          "full_iteration, attn, mlp, moe, moe_router, moe_preprocess and mamba; cuda_graph_warmup_steps must be a "
          "count. Megatron rejects anything else at start-up.",
          {}}) {}

void ConfigUnknownCudaGraphValueCheck::CheckGraphs(const ConfigDocument& config, const CudaGraphSettings& graphs,
                                                   const BoundOptions& options, std::vector<Finding>* findings) const {
  const auto is_known = [](absl::Span<const absl::string_view> known, absl::string_view name) {
    return std::find(known.begin(), known.end(), name) != known.end();
  };
  if (!is_known(kKnownImpls, graphs.impl_name) && !graphs.impl.values.empty()) {
    findings->push_back(
        GraphFinding(graphs, graphs.impl.WhereValue(config, graphs.impl.values.front()),
                     absl::StrCat("cuda_graph_impl is '", graphs.impl_name, "', which Megatron does not know.",
                                  Suggestion(graphs.impl_name, kKnownImpls)),
                     absl::StrCat("Use one of ", absl::StrJoin(kKnownImpls, ", "), ".")));
  }
  for (const ConfigScalar& scope : graphs.scope.values) {
    if (is_known(kKnownScopes, scope.text)) continue;
    findings->push_back(
        GraphFinding(graphs, graphs.scope.WhereValue(config, scope),
                     absl::StrCat("cuda_graph_scope has '", scope.text, "', which is not a CUDA-graph scope.",
                                  Suggestion(scope.text, kKnownScopes)),
                     absl::StrCat("Use scope names from ", absl::StrJoin(kKnownScopes, ", "), ".")));
  }
  const Setting warmup = Lookup(config, config_keys::kCudaGraphWarmupSteps);
  int steps = 0;
  if (warmup.is_set() && (warmup.values.size() != 1 || !absl::SimpleAtoi(warmup.AsString(), &steps) || steps < 0)) {
    findings->push_back(
        GraphFinding(graphs, warmup.Where(config),
                     absl::StrCat(warmup.Describe(),
                                  ": the number of eager warmup steps before capture must be a whole number "
                                  "of steps, 0 or more."),
                     absl::StrCat(HowToSet(config, config_keys::kCudaGraphWarmupSteps, "3"), " (the default).")));
  }
}

std::unique_ptr<Check> NewConfigUnknownCudaGraphValueCheck() {
  return std::make_unique<ConfigUnknownCudaGraphValueCheck>();
}

}  // namespace graphcheck::checks
