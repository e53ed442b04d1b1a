#include "checks/config/config_keys.h"

#include <algorithm>
#include <iterator>
#include <tuple>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"

namespace graphcheck::checks {
namespace config_keys {

// Defaults follow Megatron Core's TransformerConfig / argparse and Megatron Bridge's ConfigContainer.
const ConfigKey kCudaGraphImpl{{"model.cuda_graph_impl"}, "--cuda-graph-impl", "", "none", "none"};
const ConfigKey kCudaGraphScope{{"model.cuda_graph_scope"}, "--cuda-graph-scope", "", "", ""};
const ConfigKey kCudaGraphWarmupSteps{{"model.cuda_graph_warmup_steps"}, "--cuda-graph-warmup-steps", "", "3", "3"};
const ConfigKey kEnableCudaGraph{{"model.enable_cuda_graph"}, "--enable-cuda-graph", "", "false", "false"};
const ConfigKey kExternalCudaGraph{{"model.external_cuda_graph"}, "--external-cuda-graph", "", "false", "false"};
// Megatron Core has one flag for both of Bridge's switches.
const ConfigKey kModelTeRngTracker{{"model.use_te_rng_tracker"}, "--te-rng-tracker", "", "false", "false"};
const ConfigKey kRngTeRngTracker{{"rng.te_rng_tracker"}, "", "", "false", ""};
const ConfigKey kCheckForNanInLoss{{"rerun_state_machine.check_for_nan_in_loss"},
                                   "--check-for-nan-in-loss-and-grad",
                                   "--no-check-for-nan-in-loss-and-grad",
                                   "true",
                                   "true"};
const ConfigKey kCheckForNanInGrad{{"ddp.check_for_nan_in_grad"}, "", "", "false", ""};
const ConfigKey kNumMoeExperts{{"model.num_moe_experts"}, "--num-experts", "", "", ""};
const ConfigKey kMoeExpertCapacityFactor{
    {"model.moe_expert_capacity_factor"}, "--moe-expert-capacity-factor", "", "", ""};
const ConfigKey kMoePadExpertInputToCapacity{
    {"model.moe_pad_expert_input_to_capacity"}, "--moe-pad-expert-input-to-capacity", "", "false", "false"};
const ConfigKey kCpuOffloading{{"model.cpu_offloading"}, "--cpu-offloading", "", "false", "false"};
const ConfigKey kDelayWgradCompute{
    {"model.delay_wgrad_compute", "comm_overlap.delay_wgrad_compute"}, "--delay-wgrad-compute", "", "false", "false"};
// Bridge picks the default by whether the fused kernel is installed, so it is unknown here.
const ConfigKey kGradientAccumulationFusion{
    {"model.gradient_accumulation_fusion"}, "", "--no-gradient-accumulation-fusion", "", "true"};
const ConfigKey kAddBiasLinear{{"model.add_bias_linear"}, "", "--disable-bias-linear", "true", "true"};
const ConfigKey kAddQkvBias{{"model.add_qkv_bias"}, "--add-qkv-bias", "", "false", "false"};
const ConfigKey kRecomputeGranularity{{"model.recompute_granularity"}, "--recompute-granularity", "", "", ""};
const ConfigKey kRecomputeModules{{"model.recompute_modules"}, "--recompute-modules", "", "", ""};
const ConfigKey kVariableSeqLengths{{"model.variable_seq_lengths"}, "--variable-seq-lengths", "", "false", "false"};
const ConfigKey kRampupBatchSize{{"train.rampup_batch_size"}, "--rampup-batch-size", "", "", ""};
const ConfigKey kPackedSequenceSize{{"dataset.packed_sequence_specs.packed_sequence_size"}, "", "", "", ""};
const ConfigKey kPadCuSeqlens{{"dataset.packed_sequence_specs.pad_cu_seqlens"}, "", "", "false", ""};

}  // namespace config_keys

namespace {

// "model.add_bias_linear" -> "add_bias_linear"; "--te-rng-tracker" -> "te_rng_tracker".
std::string NameOf(const ConfigKey& key) {
  if (!key.bridge_keys.empty()) return key.bridge_keys.front().substr(key.bridge_keys.front().rfind('.') + 1);
  return absl::StrReplaceAll(absl::StripPrefix(key.flag, "--"), {{"-", "_"}});
}

Setting FromEntry(const ConfigKey& key, const ConfigEntry& entry, bool negated) {
  Setting setting;
  setting.name = NameOf(key);
  setting.entry = &entry;
  setting.key = entry.key;
  if (entry.kind == ConfigEntry::Kind::kFlag) {
    setting.values.push_back(ConfigScalar{negated ? "false" : "true", entry.position});
  } else {
    setting.values = entry.values;
  }
  return setting;
}

}  // namespace

Setting Lookup(const ConfigDocument& document, const ConfigKey& key) {
  Setting setting;
  setting.name = NameOf(key);
  std::string default_value;
  if (document.dialect() == ConfigDialect::kBridge) {
    setting.applicable = !key.bridge_keys.empty();
    for (const std::string& name : key.bridge_keys) {
      if (const ConfigEntry* entry = document.Find(name)) return FromEntry(key, *entry, /*negated=*/false);
    }
    if (setting.applicable) setting.key = key.bridge_keys.front();
    default_value = key.bridge_default;
  } else {
    setting.applicable = !key.flag.empty() || !key.negated_flag.empty();
    // argparse lets the later of a flag and its twin win: compare positions, or (on the command line, where there
    // are none) the order the entries were added in.
    const ConfigEntry* on = key.flag.empty() ? nullptr : document.Find(key.flag);
    const ConfigEntry* off = key.negated_flag.empty() ? nullptr : document.Find(key.negated_flag);
    if (on != nullptr && off != nullptr) {
      const auto order = [](const ConfigEntry* e) { return std::make_tuple(e->position.line, e->position.column, e); };
      return order(off) > order(on) ? FromEntry(key, *off, /*negated=*/true) : FromEntry(key, *on, /*negated=*/false);
    }
    if (on != nullptr) return FromEntry(key, *on, /*negated=*/false);
    if (off != nullptr) return FromEntry(key, *off, /*negated=*/true);
    setting.key = key.flag.empty() ? key.negated_flag : key.flag;
    default_value = key.mcore_default;
  }
  if (!default_value.empty()) setting.values.push_back(ConfigScalar{default_value, Position{}});
  return setting;
}

std::optional<bool> Setting::AsBool() const {
  if (values.size() != 1) return std::nullopt;
  const std::string text = absl::AsciiStrToLower(absl::StripAsciiWhitespace(values.front().text));
  if (text == "true" || text == "yes" || text == "on" || text == "1") return true;
  if (text == "false" || text == "no" || text == "off" || text == "0") return false;
  return std::nullopt;
}

std::string Setting::AsString() const { return values.empty() ? "" : values.front().text; }

std::optional<double> Setting::AsNumber() const {
  double value = 0;
  if (values.size() != 1 || !absl::SimpleAtod(values.front().text, &value)) return std::nullopt;
  return value;
}

const ConfigScalar* Setting::FindValue(absl::string_view text) const {
  for (const ConfigScalar& value : values) {
    if (value.text == text) return &value;
  }
  return nullptr;
}

Location Setting::Where(const ConfigDocument& document, Position anchor) const {
  if (entry != nullptr) return document.LocationOf(*entry);
  Location location = document.LocationOfMissing(key);
  location.line = anchor.line;
  location.column = anchor.column;
  return location;
}

Location Setting::WhereValue(const ConfigDocument& document, const ConfigScalar& value) const {
  if (entry == nullptr) return Where(document);
  return document.LocationOf(*entry, value);
}

std::string Setting::Describe() const {
  std::vector<std::string> texts;
  for (const ConfigScalar& value : values) texts.push_back(value.text);
  const std::string shown = texts.size() == 1 ? texts.front() : absl::StrCat("[", absl::StrJoin(texts, ", "), "]");
  const bool is_flag = absl::StartsWith(key, "-");
  if (entry == nullptr) {
    if (is_flag) {
      return texts.empty() ? absl::StrCat(key, " is not passed")
                           : absl::StrCat(key, " is not passed, so ", name, " is ", shown);
    }
    return texts.empty() ? absl::StrCat(key, " is not set") : absl::StrCat(key, " is not set (default: ", shown, ")");
  }
  // A switch is described by its presence; its "true" / "false" is implied.
  std::string described =
      entry->kind == ConfigEntry::Kind::kFlag ? key : absl::StrCat(key, is_flag ? " " : ": ", shown);
  if (entry->position.line > 0) absl::StrAppend(&described, " (line ", entry->position.line, ")");
  return described;
}

std::string HowToSet(const ConfigDocument& document, const ConfigKey& key, absl::string_view value) {
  if (document.dialect() == ConfigDialect::kBridge) {
    return absl::StrCat("set ", key.bridge_keys.front(), ": ", value);
  }
  // Megatron Core's booleans are store_true / store_false switches.
  if (value == "true") {
    return key.flag.empty() ? absl::StrCat("remove ", key.negated_flag) : absl::StrCat("pass ", key.flag);
  }
  if (value == "false") {
    return key.negated_flag.empty() ? absl::StrCat("remove ", key.flag) : absl::StrCat("pass ", key.negated_flag);
  }
  return absl::StrCat("pass ", key.flag, " ", value);
}

bool IsMegatronConfiguration(const ConfigDocument& document) {
  // A launch script's exported variables are the job's environment, which the environment checks read. A YAML or JSON
  // file's `env:` section alone is not: docker-compose files and CI workflows hold those too.
  if (document.dialect() == ConfigDialect::kMcoreArgs && !document.environment().variables.variables().empty()) {
    return true;
  }
  // Hydra configurations (a `defaults:` list, a `hydra:` section) share section names with ConfigContainer (model:,
  // dataset:) but are a different format, which no check reads.
  const bool hydra = std::any_of(document.entries().begin(), document.entries().end(), [](const ConfigEntry& entry) {
    const absl::string_view section = absl::string_view(entry.key).substr(0, entry.key.find('.'));
    return section == "defaults" || section == "hydra";
  });
  if (document.dialect() == ConfigDialect::kBridge && hydra) return false;
  // Megatron Bridge's ConfigContainer sections (and NeMo-Run's executor, which carries the job's environment).
  static constexpr absl::string_view kBridgeSections[] = {"model",
                                                          "train",
                                                          "optimizer",
                                                          "scheduler",
                                                          "ddp",
                                                          "dist",
                                                          "rng",
                                                          "dataset",
                                                          "logger",
                                                          "tokenizer",
                                                          "checkpoint",
                                                          "profiling",
                                                          "peft",
                                                          "comm_overlap",
                                                          "ft",
                                                          "mixed_precision",
                                                          "straggler",
                                                          "nvrx_straggler",
                                                          "inprocess_restart",
                                                          "rerun_state_machine",
                                                          "executor"};
  // Megatron Core's arguments that every training launch passes, beside those the configuration checks read.
  static constexpr absl::string_view kCoreFlags[] = {
      "--num-layers",       "--hidden-size",       "--num-attention-heads",        "--seq-length",
      "--micro-batch-size", "--global-batch-size", "--tensor-model-parallel-size", "--pipeline-model-parallel-size",
      "--transformer-impl"};
  const ConfigKey* const kChecked[] = {&config_keys::kCudaGraphImpl,
                                       &config_keys::kCudaGraphScope,
                                       &config_keys::kCudaGraphWarmupSteps,
                                       &config_keys::kEnableCudaGraph,
                                       &config_keys::kExternalCudaGraph,
                                       &config_keys::kModelTeRngTracker,
                                       &config_keys::kRngTeRngTracker,
                                       &config_keys::kCheckForNanInLoss,
                                       &config_keys::kCheckForNanInGrad,
                                       &config_keys::kNumMoeExperts,
                                       &config_keys::kMoeExpertCapacityFactor,
                                       &config_keys::kMoePadExpertInputToCapacity,
                                       &config_keys::kCpuOffloading,
                                       &config_keys::kDelayWgradCompute,
                                       &config_keys::kGradientAccumulationFusion,
                                       &config_keys::kAddBiasLinear,
                                       &config_keys::kAddQkvBias,
                                       &config_keys::kRecomputeGranularity,
                                       &config_keys::kRecomputeModules,
                                       &config_keys::kVariableSeqLengths,
                                       &config_keys::kRampupBatchSize,
                                       &config_keys::kPackedSequenceSize,
                                       &config_keys::kPadCuSeqlens};
  auto is_megatron_key = [&](const std::string& key) {
    if (document.dialect() == ConfigDialect::kBridge) {
      const absl::string_view section = absl::string_view(key).substr(0, key.find('.'));
      return std::find(std::begin(kBridgeSections), std::end(kBridgeSections), section) != std::end(kBridgeSections);
    }
    if (std::find(std::begin(kCoreFlags), std::end(kCoreFlags), key) != std::end(kCoreFlags)) return true;
    return std::any_of(std::begin(kChecked), std::end(kChecked),
                       [&](const ConfigKey* k) { return key == k->flag || key == k->negated_flag; });
  };
  return std::any_of(document.entries().begin(), document.entries().end(),
                     [&](const ConfigEntry& entry) { return is_megatron_key(entry.key); });
}

bool HasCudaGraphSetting(const ConfigDocument& document) {
  const ConfigKey* const kCudaGraphKeys[] = {&config_keys::kCudaGraphImpl, &config_keys::kCudaGraphScope,
                                             &config_keys::kCudaGraphWarmupSteps, &config_keys::kEnableCudaGraph,
                                             &config_keys::kExternalCudaGraph};
  return std::any_of(std::begin(kCudaGraphKeys), std::end(kCudaGraphKeys), [&](const ConfigKey* key) {
    const Setting setting = Lookup(document, *key);
    return setting.applicable && setting.is_set();
  });
}

}  // namespace graphcheck::checks
