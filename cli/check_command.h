// `graphcheck check MODEL [options]`: the engine (graphcheck-engine, LibTorch) runs the make_graphed_callables
// pipeline on a TorchScript model or a built-in one under the recorder; the report merges the static checks, the
// engine's steps, metrics and numerics checks, and the analysis of its trace.
#ifndef GRAPHCHECK_CLI_CHECK_COMMAND_H_
#define GRAPHCHECK_CLI_CHECK_COMMAND_H_

#include <vector>

#include "cli/common.h"
#include "core/report.h"

namespace graphcheck {

void AddCheckCommand(CLI::App* app, CommandContext* context);

// One speedup per check report: the engine's CUDA-event step times (check.*) are the measurement. The trace's
// graphed.speedup and graphed.forecast_error_ratio, computed from steps whose launches the recorder recorded (and so
// lengthened), are dropped; the trace's forecast (launch.forecast_graphed_us) is compared with the engine's times
// instead: check.forecast_savings_us and check.forecast_error_ratio.
void UseEngineTimesForTheForecast(std::vector<Metric>* metrics);

}  // namespace graphcheck

#endif  // GRAPHCHECK_CLI_CHECK_COMMAND_H_
