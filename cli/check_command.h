// `graphcheck check MODEL [options]`: the engine (graphcheck-engine, LibTorch) runs the make_graphed_callables
// pipeline on a TorchScript model or a built-in one under the recorder; the report merges the static checks, the
// engine's steps, metrics and numerics checks, and the analysis of its trace.
#ifndef GRAPHCHECK_CLI_CHECK_COMMAND_H_
#define GRAPHCHECK_CLI_CHECK_COMMAND_H_

#include "cli/common.h"

namespace graphcheck {

void AddCheckCommand(CLI::App* app, CommandContext* context);

}  // namespace graphcheck

#endif  // GRAPHCHECK_CLI_CHECK_COMMAND_H_
