// `graphcheck run [options] -- CMD ARGS...`: run any program with the recorder injected, then analyze its traces.
#ifndef GRAPHCHECK_CLI_RUN_COMMAND_H_
#define GRAPHCHECK_CLI_RUN_COMMAND_H_

#include "cli/common.h"

namespace graphcheck {

void AddRunCommand(CLI::App* app, CommandContext* context);

}  // namespace graphcheck

#endif  // GRAPHCHECK_CLI_RUN_COMMAND_H_
