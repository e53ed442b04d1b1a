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

// The step times of the engine's run without the recorder (`unrecorded`: its check.eager_step_us, graphed, speedup
// and eager_outside_graphable_us metrics) replace the recorded run's in `metrics`; the recorded eager step stays as
// check.recorded_eager_step_us with check.recorder_perturbation_ratio. On an H100, recording every launch lengthened
// builtin:mlp's eager step from ~700 to ~1200 us and its graphed step from ~285 to ~700 us.
void UseUnrecordedTimes(const std::vector<Metric>& unrecorded, std::vector<Metric>* metrics);

// Where a capture check names why the engine's capture failed (sync-in-capture, pageable-memcpy, ...: an error of the
// check a CaptureCause maps to, capture-error aside), that finding is the defect's, and two others become notes beside
// it: pipeline-step-failed of the capture step (there so that no failed step goes unreported), and sync-in-region (a
// forecast for the steps whose capture was tried; on an H200, a pageable copy PyTorch refused in the capture was a
// sync-in-region warning in every eager step too).
void NoteWhatANamedCaptureFailureExplains(Report* report);

}  // namespace graphcheck

#endif  // GRAPHCHECK_CLI_CHECK_COMMAND_H_
