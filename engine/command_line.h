// graphcheck-engine's command line: the flags `graphcheck check` passes (cli/check_command.cc), parsed into a plan of
// typed values. The names the engine takes (--scope, --amp, --optimizer, --numerics, --input, --vary) are checked
// here, so the pipeline never sees a string it would have to validate.
#ifndef GRAPHCHECK_ENGINE_COMMAND_LINE_H_
#define GRAPHCHECK_ENGINE_COMMAND_LINE_H_

#include <string>

#include "absl/status/statusor.h"
#include "engine/pipeline.h"

namespace graphcheck {

struct EngineCommand {
  CheckPlan plan;
  std::string result_path;  // where the EngineRun's JSON goes
};

// InvalidArgument naming the flag for anything the engine does not take.
absl::StatusOr<EngineCommand> ParseEngineCommandLine(int argc, const char* const* argv);

}  // namespace graphcheck

#endif  // GRAPHCHECK_ENGINE_COMMAND_LINE_H_
