// The `graphcheck check` pipeline, run in the engine process under the recorder: load the model, an eager reference
// and its repeat from the same state, warmup on a side stream, forward and backward capture (or one full-iteration
// capture), replays, the random draws of both (rng-draws), each a named step with its status, wall time and an NVTX
// range "graphcheck:STEP" (timed steps inside are "graphcheck:step"), then the metrics and the numerics samples
// (engine/numerics_snapshot.h). A failing step stops the pipeline: it is reported failed with the diagnosis,
// the rest skipped. With CheckPlan::timing_only, the run `graphcheck check` starts again without the recorder: the
// graphs, then eager and graphed steps timed (step "timing").
#ifndef GRAPHCHECK_ENGINE_PIPELINE_H_
#define GRAPHCHECK_ENGINE_PIPELINE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/model_spec.h"
#include "engine/fused_optimizer.h"
#include "engine/run/engine_run.h"

namespace graphcheck {

inline constexpr char kStepRange[] = "graphcheck:step";  // one timed training (or evaluation) step

enum class GraphScope {
  kCallables,      // the forward and the backward graphed (MakeGraphedCallables); loss and optimizer step eager
  kFullIteration,  // forward, backward and optimizer step in one graph
};
enum class Autocast { kOff, kBf16, kFp16 };  // the forward's autocast dtype

struct CheckPlan {
  std::string model;              // builtin:NAME or a TorchScript path
  std::vector<InputSpec> inputs;  // --input; empty: the built-in's defaults
  std::string inputs_file;        // --inputs
  bool train = true;
  FusedOptimizer::Kind optimizer = FusedOptimizer::Kind::kSgd;
  GraphScope scope = GraphScope::kCallables;
  Autocast amp = Autocast::kOff;
  int warmup = 3;
  int steps = 20;  // timed eager steps and timed graphed steps, each
  uint64_t seed = 0;
  // Deterministic kernels (cuDNN deterministic, benchmark and TF32 off) so that graphed can be held to bitwise
  // equality where eager reproduces itself; false (--numerics native) keeps LibTorch's defaults.
  bool deterministic = true;
  // Only what the step times need (load, eager warmup, graphs, then eager and graphed steps timed): the run that
  // `graphcheck check` starts without the recorder, whose times are the program's own.
  bool timing_only = false;
  // --vary: graphs captured for each size of one input dimension besides the pipeline's own (step "shape-variants").
  std::optional<VariedDimension> vary;
};

// InvalidArgument for bad input (model, inputs, a plan whose parts do not go together); FailedPrecondition when there
// is no CUDA device. Failures of the model under capture are not errors: they are the failed step of the returned run.
absl::StatusOr<EngineRun> RunCheckPipeline(const CheckPlan& plan);

}  // namespace graphcheck

#endif  // GRAPHCHECK_ENGINE_PIPELINE_H_
