// config-static-shapes: settings that change tensor shapes between steps (variable sequence lengths,
// batch-size ramp-up, unpadded packed sequences); a graph replays the shapes it captured.
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "checks/checks.h"
#include "checks/config/cuda_graph_config_check.h"
#include "core/check_ids.h"

namespace graphcheck::checks {
namespace {

class ConfigStaticShapesCheck : public CudaGraphConfigCheck {
 public:
  ConfigStaticShapesCheck();

 protected:
  void CheckGraphs(const ConfigDocument& config, const CudaGraphSettings& graphs, const BoundOptions& options,
                   std::vector<Finding>* findings) const override;
};

}  // namespace

ConfigStaticShapesCheck::ConfigStaticShapesCheck()
    : CudaGraphConfigCheck(CheckInfo{
          check_id::kConfigStaticShapes,
          "settings that change tensor shapes between steps",
          Severity::kError,
          CheckArea::kConfiguration,
          "A CUDA graph replays the shapes it captured: sequence length and micro-batch size must stay fixed. "
          "Variable sequence lengths, batch-size ramp-up and packed sequences without padded cu_seqlens change them.",
          {}}) {}

void ConfigStaticShapesCheck::CheckGraphs(const ConfigDocument& config, const CudaGraphSettings& graphs,
                                          const BoundOptions& options, std::vector<Finding>* findings) const {
  const Setting variable = Lookup(config, config_keys::kVariableSeqLengths);
  if (variable.IsTrue()) {
    findings->push_back(GraphFinding(graphs, variable.Where(config),
                                     absl::StrCat(variable.Describe(),
                                                  " with CUDA graphs on. Each step's sequence length then differs, but "
                                                  "replayed graphs keep the shapes of the step they captured."),
                                     absl::StrCat(HowToSet(config, config_keys::kVariableSeqLengths, "false"),
                                                  " and pad every sequence to a fixed seq_length.")));
  }
  const Setting rampup = Lookup(config, config_keys::kRampupBatchSize);
  if (rampup.is_set() && !rampup.values.empty()) {
    findings->push_back(GraphFinding(
        graphs, rampup.Where(config),
        absl::StrCat(rampup.Describe(),
                     " with CUDA graphs on. Ramp-up changes the number of micro-batches per step, "
                     "while the graphs (and Transformer Engine's capture order) are made for the "
                     "count at capture time."),
        "Remove the batch-size ramp-up (train at the final global batch size), or start graphs only after it ends."));
  }
  const Setting packed_size = Lookup(config, config_keys::kPackedSequenceSize);
  const Setting pad = Lookup(config, config_keys::kPadCuSeqlens);
  if (packed_size.AsNumber().value_or(0) > 0 && !pad.IsTrue()) {
    findings->push_back(GraphFinding(
        graphs, pad.Where(config, packed_size.entry != nullptr ? packed_size.entry->position : Position{}),
        absl::StrCat(pad.Describe(),
                     " with packed sequences and CUDA graphs. The cu_seqlens tensor of a packed "
                     "batch changes length with the number of sequences packed into it."),
        absl::StrCat(HowToSet(config, config_keys::kPadCuSeqlens, "true"), " so cu_seqlens has a fixed size.")));
  }
}

std::unique_ptr<Check> NewConfigStaticShapesCheck() { return std::make_unique<ConfigStaticShapesCheck>(); }

}  // namespace graphcheck::checks
