// `graphcheck trace`: work with recorded trace files. `trace export TRACE... -o FILE` writes Chrome trace JSON for
// Perfetto (one process per trace); `trace dump TRACE` prints what a trace holds (per-record-type counts and bytes,
// the process, devices, read warnings, and optionally the first events), for debugging the recorder and the format.
#ifndef GRAPHCHECK_CLI_TRACE_COMMAND_H_
#define GRAPHCHECK_CLI_TRACE_COMMAND_H_

#include "cli/common.h"

namespace graphcheck {

void AddTraceCommand(CLI::App* app, CommandContext* context);

}  // namespace graphcheck

#endif  // GRAPHCHECK_CLI_TRACE_COMMAND_H_
