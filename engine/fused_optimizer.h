// SGD with momentum and Adam through PyTorch's fused multi-tensor kernels, with all state (including Adam's step
// count) on the GPU: the same step can run eagerly, between graph replays, or inside a full-iteration graph (what
// Python's capturable=True optimizers do). torch::optim's C++ optimizers keep the step count on the host, which a
// graph would freeze.
#ifndef GRAPHCHECK_ENGINE_FUSED_OPTIMIZER_H_
#define GRAPHCHECK_ENGINE_FUSED_OPTIMIZER_H_

#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "absl/status/statusor.h"

namespace graphcheck {

class FusedOptimizer {
 public:
  enum class Kind { kSgd, kAdam };
  FusedOptimizer(Kind kind, std::vector<at::Tensor> parameters);

  // Updates the parameters that have a .grad.
  void Step();
  // Zeroes the gradients in place with one multi-tensor kernel (a full-iteration graph holds their addresses), or
  // sets them to None (no kernel at all; the next backward hands its gradient tensors over instead of adding).
  void ZeroGrad(bool set_to_none = false);
  // Back to the state after construction: zero moments and step counts.
  void Reset();

 private:
  Kind kind_;
  std::vector<at::Tensor> parameters_;
  std::vector<at::Tensor> first_moments_;   // SGD momentum buffers, Adam exp_avg
  std::vector<at::Tensor> second_moments_;  // Adam exp_avg_sq
  std::vector<at::Tensor> steps_;           // Adam step counts (float32 scalars on the GPU)
};

}  // namespace graphcheck

#endif  // GRAPHCHECK_ENGINE_FUSED_OPTIMIZER_H_
