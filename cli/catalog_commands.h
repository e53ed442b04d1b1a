// `graphcheck list-checks` and `graphcheck explain ID`: the check catalog for people and tools.
#ifndef GRAPHCHECK_CLI_CATALOG_COMMANDS_H_
#define GRAPHCHECK_CLI_CATALOG_COMMANDS_H_

#include "cli/common.h"

namespace graphcheck {

void AddListChecksCommand(CLI::App* app, CommandContext* context);
void AddListMetricsCommand(CLI::App* app, CommandContext* context);
void AddExplainCommand(CLI::App* app, CommandContext* context);

}  // namespace graphcheck

#endif  // GRAPHCHECK_CLI_CATALOG_COMMANDS_H_
