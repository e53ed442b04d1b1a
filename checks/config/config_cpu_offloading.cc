// config-cpu-offloading: CPU offloading with CUDA graphs, which Megatron Core rejects.
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "checks/checks.h"
#include "checks/config/cuda_graph_config_check.h"
#include "core/check_ids.h"

namespace graphcheck::checks {
namespace {

class ConfigCpuOffloadingCheck : public CudaGraphConfigCheck {
 public:
  ConfigCpuOffloadingCheck();

 protected:
  void CheckGraphs(const ConfigDocument& config, const CudaGraphSettings& graphs, const BoundOptions& options,
                   std::vector<Finding>* findings) const override;
};

}  // namespace

ConfigCpuOffloadingCheck::ConfigCpuOffloadingCheck()
    : CudaGraphConfigCheck(CheckInfo{
          check_id::kConfigCpuOffloading,
          "CPU offloading with CUDA graphs",
          Severity::kError,
          CheckArea::kConfiguration,
          "CPU offloading moves activations or weights between host and device with synchronizations and fresh "
          "allocations that a graph cannot capture; Megatron Core rejects CUDA graphs with cpu_offloading.",
          {}}) {}

void ConfigCpuOffloadingCheck::CheckGraphs(const ConfigDocument& config, const CudaGraphSettings& graphs,
                                           const BoundOptions& options, std::vector<Finding>* findings) const {
  const Setting offloading = Lookup(config, config_keys::kCpuOffloading);
  if (!offloading.IsTrue()) return;
  findings->push_back(
      GraphFinding(graphs, offloading.Where(config),
                   absl::StrCat(offloading.Describe(),
                                " with CUDA graphs on. Offloading copies tensors to and from pinned host "
                                "memory on its own schedule and synchronizes with it, which graph "
                                "capture forbids; Megatron Core raises \"CUDA graphs not supported with "
                                "CPU offloading\"."),
                   absl::StrCat(HowToSet(config, config_keys::kCpuOffloading, "false"), ", or ",
                                HowToSet(config, config_keys::kCudaGraphImpl, kImplNone),
                                " (use activation recomputation to save memory instead).")));
}

std::unique_ptr<Check> NewConfigCpuOffloadingCheck() { return std::make_unique<ConfigCpuOffloadingCheck>(); }

}  // namespace graphcheck::checks
