// The training settings the configuration checks read, each spelled as Megatron Bridge (dotted ConfigContainer path)
// and Megatron Core (argparse flag) spell it, with each one's default, and the lookup of a setting in a document.
#ifndef GRAPHCHECK_CHECKS_CONFIG_CONFIG_KEYS_H_
#define GRAPHCHECK_CHECKS_CONFIG_CONFIG_KEYS_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "checks/config/config_document.h"

namespace graphcheck::checks {

struct ConfigKey {
  std::vector<std::string> bridge_keys;  // dotted paths; the first is the one to suggest
  std::string flag;                      // "--cuda-graph-impl"; "" when Megatron Core has no such argument
  std::string negated_flag;              // the store_false twin: "--no-check-for-nan-in-loss-and-grad"
  std::string bridge_default;            // "" = no default or one graphcheck cannot know
  std::string mcore_default;
};

// One setting's value in one document.
struct Setting {
  bool applicable = true;              // false: this dialect has no such setting (Bridge-only or MCore-only)
  const ConfigEntry* entry = nullptr;  // nullptr: not written, `values` holds the default
  std::string key;                     // as written, or as it would be written
  std::string name;                    // the setting's own name, e.g. "add_bias_linear"
  std::vector<ConfigScalar> values;    // a switch reads "true" / "false"; a null reads as no value

  bool is_set() const { return entry != nullptr; }
  // true/false/yes/no/on/off/1/0 in any case; nullopt for anything else or no value.
  std::optional<bool> AsBool() const;
  bool IsTrue() const { return AsBool().value_or(false); }
  std::string AsString() const;  // the first value, "" when none
  std::optional<double> AsNumber() const;
  // The first value equal to `text`, or nullptr.
  const ConfigScalar* FindValue(absl::string_view text) const;
  // Where a finding about this setting points: its entry, or (when unset) `anchor`'s position with this key named.
  Location Where(const ConfigDocument& document, Position anchor = {}) const;
  Location WhereValue(const ConfigDocument& document, const ConfigScalar& value) const;
  // "model.cuda_graph_impl: local (line 3)", "--te-rng-tracker (line 4)", "model.use_te_rng_tracker is not set
  // (default: false)", "--disable-bias-linear is not passed, so add_bias_linear is true".
  std::string Describe() const;
};

Setting Lookup(const ConfigDocument& document, const ConfigKey& key);

// Whether anything in the document is a Megatron Bridge / Megatron Core / Transformer Engine training setting (a
// ConfigContainer section, a Megatron argument) or a launch script's environment for the job. A file that holds none
// (`foo: bar`, a graphcheck report, a CI workflow, a docker-compose file, a Hydra configuration) would otherwise lint
// clean.
bool IsMegatronConfiguration(const ConfigDocument& document);

// Whether the document sets any CUDA-graph setting (cuda_graph_impl, cuda_graph_scope, cuda_graph_warmup_steps,
// enable_cuda_graph, external_cuda_graph): without one, only the environment and the checks of settings that matter
// whatever graphs do had anything to read, and the lint says so.
bool HasCudaGraphSetting(const ConfigDocument& document);

// How to give `key` the value `value` in the document's own dialect: "set model.cpu_offloading: false",
// "remove --cpu-offloading", "pass --no-check-for-nan-in-loss-and-grad", "pass --cuda-graph-impl local".
std::string HowToSet(const ConfigDocument& document, const ConfigKey& key, absl::string_view value);

namespace config_keys {

extern const ConfigKey kCudaGraphImpl;
extern const ConfigKey kCudaGraphScope;
extern const ConfigKey kCudaGraphWarmupSteps;
extern const ConfigKey kEnableCudaGraph;    // legacy switch for the local implementation
extern const ConfigKey kExternalCudaGraph;  // legacy switch for the Transformer Engine implementation
extern const ConfigKey kModelTeRngTracker;
extern const ConfigKey kRngTeRngTracker;
extern const ConfigKey kCheckForNanInLoss;
extern const ConfigKey kCheckForNanInGrad;
extern const ConfigKey kNumMoeExperts;
extern const ConfigKey kMoeExpertCapacityFactor;
extern const ConfigKey kMoePadExpertInputToCapacity;
extern const ConfigKey kCpuOffloading;
extern const ConfigKey kDelayWgradCompute;
extern const ConfigKey kGradientAccumulationFusion;
extern const ConfigKey kAddBiasLinear;
extern const ConfigKey kAddQkvBias;
extern const ConfigKey kRecomputeGranularity;
extern const ConfigKey kRecomputeModules;
extern const ConfigKey kVariableSeqLengths;
extern const ConfigKey kRampupBatchSize;
extern const ConfigKey kPackedSequenceSize;
extern const ConfigKey kPadCuSeqlens;

}  // namespace config_keys
}  // namespace graphcheck::checks

#endif  // GRAPHCHECK_CHECKS_CONFIG_CONFIG_KEYS_H_
