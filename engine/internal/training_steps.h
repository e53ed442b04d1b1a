// What the check pipeline (engine/pipeline.h) runs: one training or evaluation step, runs of timed steps with their
// losses, the forwards that keep their first outputs, and the model's state every run restarts from.
#ifndef GRAPHCHECK_ENGINE_INTERNAL_TRAINING_STEPS_H_
#define GRAPHCHECK_ENGINE_INTERNAL_TRAINING_STEPS_H_

#include <functional>
#include <vector>

#include <ATen/ATen.h>

#include "absl/status/status.h"
#include "engine/fused_optimizer.h"
#include "engine/graphed_callables.h"
#include "engine/models.h"
#include "engine/numerics_snapshot.h"
#include "engine/rng_draws.h"  // ForwardFn

namespace graphcheck {

using StepFn = std::function<at::Tensor(const std::vector<at::Tensor>&)>;  // one step on a batch; returns the loss

// The loss of a step: the first output itself when it is a scalar, else the mean of its squares.
at::Tensor LossOf(const std::vector<at::Tensor>& outputs);

// Autocast on the forward only, with its cache off (a cache would hold casts made during capture).
ForwardFn WithAutocast(ForwardFn forward, at::ScalarType dtype);

// The parameters and buffers at a point in time, by name, so every run starts where the eager reference started.
// Restoring copies into the tensors the module holds now: a forward that rebinds a buffer starts from its initial
// value again too.
class ModelState {
 public:
  explicit ModelState(const Model& model);
  void Restore(const Model& model) const;
  const std::vector<NamedTensor>& tensors() const { return saved_; }

 private:
  std::vector<NamedTensor> saved_;
};

// `forward`, keeping detached clones of the outputs of its first call in `kept`.
ForwardFn KeepingFirstOutputs(ForwardFn forward, std::vector<at::Tensor>* kept);

// `step`, filling `snapshot` after its first call with the first outputs that `first_outputs` kept and the gradients.
StepFn SnapshottingFirstStep(StepFn step, const Model& model, const std::vector<at::Tensor>* first_outputs,
                             RunSnapshot* snapshot);

// One training (or evaluation) step of `forward`; returns the loss. Gradients are set to None between steps, as
// PyTorch's zero_grad does, except inside a full-iteration graph, which must zero them in place. With
// `mark_graphable`, the forward and the backward run inside NVTX ranges "graphcheck:graphable": the parts
// MakeGraphedCallables graphs, so that the forecast from the eager steps keeps the loss and the optimizer step eager,
// as the graphed steps run them (analysis/launch_metrics.h). `graphable_host_us` (may be null) accumulates the host
// time of those two parts.
at::Tensor RunStep(const ForwardFn& forward, const std::vector<at::Tensor>& batch, FusedOptimizer* optimizer,
                   bool grads_in_place = false, bool mark_graphable = false, double* graphable_host_us = nullptr);

// Runs steps+1 steps and fills the losses (when given). With `step_us`, the steps after the first are timed and each
// is an NVTX range "graphcheck:step" (the trace's iterations); without, none is (the eager repeat, which only measures
// numerics).
absl::Status RunSteps(int steps, const std::vector<std::vector<at::Tensor>>& batches, const StepFn& step,
                      std::vector<double>* step_us, std::vector<double>* losses);

}  // namespace graphcheck

#endif  // GRAPHCHECK_ENGINE_INTERNAL_TRAINING_STEPS_H_
