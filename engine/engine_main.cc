// graphcheck-engine: the process `graphcheck check` starts under the recorder. It runs the check pipeline on one model
// and writes the EngineRun as JSON to --result. Exit 0 when the pipeline ran (a failed step is a result, not an
// error), 2 for bad input, 3 without a GPU; the reason is one line on stderr.
#include <cstdio>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/exit_code.h"
#include "engine/command_line.h"
#include "engine/run/engine_run_json.h"

namespace {

int Fail(const absl::Status& status) {
  std::fprintf(stderr, "graphcheck: error: %s\n", std::string(status.message()).c_str());
  return graphcheck::ExitCodeForStatus(status);
}

}  // namespace

int main(int argc, char** argv) {
  absl::StatusOr<graphcheck::EngineCommand> command = graphcheck::ParseEngineCommandLine(argc, argv);
  if (!command.ok()) return Fail(command.status());
  absl::StatusOr<graphcheck::EngineRun> run = graphcheck::RunCheckPipeline(command->plan);
  if (!run.ok()) return Fail(run.status());
  std::ofstream out(command->result_path);
  out << graphcheck::EngineRunToJson(*run);
  out.close();
  if (!out) return Fail(absl::InvalidArgumentError(absl::StrCat("cannot write ", command->result_path)));
  return graphcheck::kExitClean;
}
