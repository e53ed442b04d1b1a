// graphcheck-engine: the process `graphcheck check` starts under the recorder. It runs the check pipeline on one model
// and writes the EngineRun as JSON to --result. Exit 0 when the pipeline ran (a failed step is a result, not an
// error), 2 for bad input, 3 without a GPU; the reason is one line on stderr.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "capture/engine/pipeline.h"
#include "core/exit_code.h"
#include "report/json.h"

namespace {

int Fail(const absl::Status& status) {
  std::fprintf(stderr, "graphcheck: error: %s\n", std::string(status.message()).c_str());
  return graphcheck::ExitCodeForStatus(status);
}

}  // namespace

int main(int argc, char** argv) {
  graphcheck::CheckPlan plan;
  std::vector<std::string> inputs;
  std::string result_path;
  bool eval = false;
  std::string numerics = "deterministic";
  CLI::App app{"graphcheck's LibTorch engine (run by graphcheck check)"};
  app.add_option("MODEL", plan.model, "builtin:NAME or a TorchScript file")->required();
  app.add_option("--input", inputs, "NAME:DIMxDIM...:DTYPE");
  app.add_option("--inputs", plan.inputs_file, "tensors saved with torch.save");
  app.add_flag("--eval", eval, "forward only");
  app.add_flag("--timing-only", plan.timing_only, "only time eager and graphed steps (run without the recorder)");
  app.add_option("--optimizer", plan.optimizer);
  app.add_option("--scope", plan.scope);
  app.add_option("--amp", plan.amp);
  app.add_option("--warmup", plan.warmup);
  app.add_option("--replays", plan.steps);
  app.add_option("--seed", plan.seed);
  app.add_option("--numerics", numerics)->check(CLI::IsMember({"deterministic", "native"}));
  std::string vary;
  app.add_option("--vary", vary, "NAME:DIM=SIZE,SIZE,...");
  app.add_option("--result", result_path, "where the JSON result goes")->required();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return Fail(absl::InvalidArgumentError(e.what()));
  }
  plan.train = !eval;
  plan.deterministic = numerics == "deterministic";
  for (const std::string& text : inputs) {
    absl::StatusOr<graphcheck::InputSpec> spec = graphcheck::ParseInputSpec(text);
    if (!spec.ok()) return Fail(spec.status());
    plan.inputs.push_back(*std::move(spec));
  }
  if (!vary.empty()) {
    absl::StatusOr<graphcheck::VariedDimension> varied = graphcheck::ParseVariedDimension(vary);
    if (!varied.ok()) return Fail(varied.status());
    plan.vary = *std::move(varied);
  }
  absl::StatusOr<graphcheck::EngineRun> run = graphcheck::RunCheckPipeline(plan);
  if (!run.ok()) return Fail(run.status());
  std::ofstream out(result_path);
  out << graphcheck::EngineRunToJson(*run);
  out.close();
  if (!out) return Fail(absl::InvalidArgumentError(absl::StrCat("cannot write ", result_path)));
  return graphcheck::kExitClean;
}
