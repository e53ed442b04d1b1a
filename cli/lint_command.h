// `graphcheck lint`: static checks that need no GPU (the environment now; configurations and capture orders next).
#ifndef GRAPHCHECK_CLI_LINT_COMMAND_H_
#define GRAPHCHECK_CLI_LINT_COMMAND_H_

#include "cli/common.h"

namespace graphcheck {

void AddLintCommand(CLI::App* app, CommandContext* context);

}  // namespace graphcheck

#endif  // GRAPHCHECK_CLI_LINT_COMMAND_H_
