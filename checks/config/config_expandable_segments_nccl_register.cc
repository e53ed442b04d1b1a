// config-expandable-segments-nccl-register: the job's environment, as the configuration sets it, has
// expandable_segments with NCCL graph buffer registration; the same rule as env-expandable-segments-nccl-register.
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "checks/checks.h"
#include "checks/config/cuda_graph_config_check.h"
#include "core/check_ids.h"

namespace graphcheck::checks {
namespace {

class ConfigExpandableSegmentsNcclRegisterCheck : public CudaGraphConfigCheck {
 public:
  ConfigExpandableSegmentsNcclRegisterCheck();

 protected:
  void CheckGraphs(const ConfigDocument& config, const CudaGraphSettings& graphs, const BoundOptions& options,
                   std::vector<Finding>* findings) const override;
};

}  // namespace

ConfigExpandableSegmentsNcclRegisterCheck::ConfigExpandableSegmentsNcclRegisterCheck()
    : CudaGraphConfigCheck(CheckInfo{
          check_id::kConfigExpandableSegmentsNcclRegister,
          "configured environment: expandable_segments with NCCL graph registration",
          Severity::kError,
          CheckArea::kConfiguration,
          "The environment the configuration sets for the job has PYTORCH_CUDA_ALLOC_CONF expandable_segments:True "
          "while NCCL_GRAPH_REGISTER is not 0, with CUDA graphs on. Transformer Engine asserts against it on every "
          "GPU, Megatron Core's local path below compute capability 10.",
          {}}) {}

void ConfigExpandableSegmentsNcclRegisterCheck::CheckGraphs(const ConfigDocument& config,
                                                            const CudaGraphSettings& graphs,
                                                            const BoundOptions& options,
                                                            std::vector<Finding>* findings) const {
  // The rule is env-expandable-segments-nccl-register's, applied to the configured environment instead of the
  // current process's; its findings are re-pointed at the configuration.
  const ConfigEnvironment& environment = config.environment();
  const std::unique_ptr<Check> rule = NewEnvExpandableSegmentsNcclRegisterCheck();
  const CheckOptions no_options;
  CheckInputs inputs;
  inputs.Add(environment.variables);
  std::vector<Finding> rule_findings;
  rule->Run(inputs, BoundOptions(rule->info(), no_options), &rule_findings);
  for (Finding& rule_finding : rule_findings) {
    Finding finding =
        GraphFinding(graphs, config.LocationOfMissing(rule_finding.where.key), std::move(rule_finding.message),
                     "Set NCCL_GRAPH_REGISTER=0 in the job's environment section, or remove "
                     "expandable_segments:True from PYTORCH_CUDA_ALLOC_CONF there.");
    auto position = environment.positions.find(rule_finding.where.key);
    if (position != environment.positions.end()) {
      finding.where.line = position->second.line;
      finding.where.column = position->second.column;
    }
    for (std::string& evidence : rule_finding.evidence) finding.evidence.push_back(std::move(evidence));
    findings->push_back(std::move(finding));
  }
}

std::unique_ptr<Check> NewConfigExpandableSegmentsNcclRegisterCheck() {
  return std::make_unique<ConfigExpandableSegmentsNcclRegisterCheck>();
}

}  // namespace graphcheck::checks
