// config-te-rng-tracker: CUDA graphs on without Transformer Engine's RNG tracker, which Megatron
// requires so that dropout masks come from a graph-safe generator.
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "checks/checks.h"
#include "checks/config/cuda_graph_config_check.h"
#include "core/check_ids.h"

namespace graphcheck::checks {
namespace {

class ConfigTeRngTrackerCheck : public CudaGraphConfigCheck {
 public:
  ConfigTeRngTrackerCheck();

 protected:
  void CheckGraphs(const ConfigDocument& config, const CudaGraphSettings& graphs, const BoundOptions& options,
                   std::vector<Finding>* findings) const override;
};

}  // namespace

ConfigTeRngTrackerCheck::ConfigTeRngTrackerCheck()
    : CudaGraphConfigCheck(CheckInfo{
          check_id::kConfigTeRngTracker,
          "CUDA graphs without Transformer Engine's RNG tracker",
          Severity::kError,
          CheckArea::kConfiguration,
          "CUDA graphs are on but Transformer Engine's CUDA RNG tracker is not. Replayed graphs must draw dropout "
          "masks from a graph-safe generator; Megatron asserts at start-up (use_te_rng_tracker and "
          "rng.te_rng_tracker).",
          {}}) {}

void ConfigTeRngTrackerCheck::CheckGraphs(const ConfigDocument& config, const CudaGraphSettings& graphs,
                                          const BoundOptions& options, std::vector<Finding>* findings) const {
  // Megatron-LM seeds its graph-safe RNG (use_cudagraphable_rng) whenever cuda_graph_impl is not none, and Megatron
  // Core's own graphs take it: CudaGraphManager's layer graphs and FullCudaGraphWrapper (megatron-core 0.19.2 trained
  // both so on an H200). Bridge's model provider asserts Transformer Engine's tracker for every implementation.
  if (config.dialect() == ConfigDialect::kMcoreArgs &&
      (graphs.impl_name == kImplLocal || graphs.impl_name == kImplFullIteration)) {
    return;
  }
  // Bridge has two switches (the model's and the RNG initialisation's); Megatron Core's one flag sets both.
  for (const ConfigKey* key : {&config_keys::kModelTeRngTracker, &config_keys::kRngTeRngTracker}) {
    const Setting tracker = Lookup(config, *key);
    if (!tracker.applicable || tracker.IsTrue()) continue;
    Finding finding = GraphFinding(
        graphs, tracker.Where(config, graphs.anchor()),
        absl::StrCat(tracker.Describe(), ", but CUDA graphs are on (cuda_graph_impl ", graphs.impl_name,
                     "). Graphs need Transformer Engine's CUDA RNG tracker, whose generator state lives in device "
                     "memory that replays advance; Megatron refuses to start (\"Transformer engine's RNG tracker is "
                     "required for cudagraphs\")."),
        absl::StrCat(HowToSet(config, *key, "true"), "."));
    findings->push_back(std::move(finding));
  }
}

std::unique_ptr<Check> NewConfigTeRngTrackerCheck() { return std::make_unique<ConfigTeRngTrackerCheck>(); }

}  // namespace graphcheck::checks
