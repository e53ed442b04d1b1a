#include "engine/command_line.h"

#include <CLI/CLI.hpp>

#include <map>
#include <vector>

#include "absl/status/status.h"

namespace graphcheck {
namespace {

// A choice among names, the names listed in the error ("--scope: moe not in {callables,full-iteration}").
template <typename T>
void AddChoice(CLI::App& app, const std::string& flag, const std::map<std::string, T>& names, T* out) {
  std::vector<std::string> accepted;
  for (const auto& [name, value] : names) accepted.push_back(name);
  app.add_option_function<std::string>(flag, [names, out](const std::string& name) { *out = names.at(name); })
      ->check(CLI::IsMember(accepted));
}

}  // namespace

absl::StatusOr<EngineCommand> ParseEngineCommandLine(int argc, const char* const* argv) {
  EngineCommand command;
  CheckPlan& plan = command.plan;
  std::vector<std::string> inputs;
  std::string vary;
  bool eval = false;
  CLI::App app{"graphcheck's LibTorch engine (run by graphcheck check)"};
  app.add_option("MODEL", plan.model, "builtin:NAME or a TorchScript file")->required();
  app.add_option("--input", inputs, "NAME:DIMxDIM...:DTYPE");
  app.add_option("--inputs", plan.inputs_file, "tensors saved with torch.save");
  app.add_flag("--eval", eval, "forward only");
  app.add_flag("--timing-only", plan.timing_only, "only time eager and graphed steps (run without the recorder)");
  AddChoice<FusedOptimizer::Kind>(app, "--optimizer",
                                  {{"sgd", FusedOptimizer::Kind::kSgd}, {"adam", FusedOptimizer::Kind::kAdam}},
                                  &plan.optimizer);
  AddChoice<GraphScope>(app, "--scope",
                        {{"callables", GraphScope::kCallables}, {"full-iteration", GraphScope::kFullIteration}},
                        &plan.scope);
  AddChoice<Autocast>(app, "--amp", {{"bf16", Autocast::kBf16}, {"fp16", Autocast::kFp16}}, &plan.amp);
  AddChoice<bool>(app, "--numerics", {{"deterministic", true}, {"native", false}}, &plan.deterministic);
  app.add_option("--warmup", plan.warmup);
  app.add_option("--replays", plan.steps);
  app.add_option("--seed", plan.seed);
  app.add_option("--vary", vary, "NAME:DIM=SIZE,SIZE,...");
  app.add_option("--result", command.result_path, "where the JSON result goes")->required();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return absl::InvalidArgumentError(e.what());
  }
  plan.train = !eval;
  for (const std::string& text : inputs) {
    absl::StatusOr<InputSpec> spec = ParseInputSpec(text);
    if (!spec.ok()) return spec.status();
    plan.inputs.push_back(*std::move(spec));
  }
  if (!vary.empty()) {
    absl::StatusOr<VariedDimension> varied = ParseVariedDimension(vary);
    if (!varied.ok()) return varied.status();
    plan.vary = *std::move(varied);
  }
  return command;
}

}  // namespace graphcheck
