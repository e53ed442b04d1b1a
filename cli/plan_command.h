// `graphcheck plan TRACE|DIR... [--format text|json|markdown|html] [-o FILE]`: which shapes to capture, from an eager
// run recorded with `graphcheck run --plan` (analysis/capture_plan.h): per region, the sizes seen and bucket sets
// with their coverage, padding, pool memory, start-up cost and saving (docs/profiling.md).
#ifndef GRAPHCHECK_CLI_PLAN_COMMAND_H_
#define GRAPHCHECK_CLI_PLAN_COMMAND_H_

#include "cli/common.h"

namespace graphcheck {

void AddPlanCommand(CLI::App* app, CommandContext* context);

}  // namespace graphcheck

#endif  // GRAPHCHECK_CLI_PLAN_COMMAND_H_
