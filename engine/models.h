// Models for `graphcheck check`: the built-in ones (clean and planted-defect variants, catalogued in
// core/model_spec.h) built with torch::nn, TorchScript archives loaded with torch::jit::load, and their inputs.
#ifndef GRAPHCHECK_ENGINE_MODELS_H_
#define GRAPHCHECK_ENGINE_MODELS_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "absl/status/statusor.h"
#include "core/model_spec.h"
#include "engine/graphed_callables.h"
#include "engine/numerics_snapshot.h"

namespace graphcheck {

struct Model {
  Callable callable;
  std::function<void(bool training)> set_training;
  // The parameters and buffers by name as the module holds them now: a forward that rebinds an attribute
  // (`self.steps = self.steps + 1`) shows its new tensor here, where callable.buffers keeps the one at load.
  std::function<std::vector<NamedTensor>()> named_state;
  std::vector<InputSpec> inputs;  // built-in: the default inputs; TorchScript: from forward's schema (no shape)
  std::shared_ptr<void> module;   // keeps the module alive
};

// InvalidArgument for a TorchScript file LibTorch cannot load or whose forward takes non-tensor arguments.
absl::StatusOr<Model> LoadModel(const ModelRef& ref, const at::Device& device, uint64_t seed);

// Seeded input tensors on `device`: normal values for floating dtypes, [0, 10) for integers.
std::vector<at::Tensor> MakeInputs(const std::vector<InputSpec>& specs, const at::Device& device, uint64_t seed);

// Tensors saved from Python with torch.save: a tensor, a list or tuple of tensors, or a dict name -> tensor (matched
// to the model's inputs by name). InvalidArgument when the file is not that, or the names do not match.
absl::StatusOr<std::vector<at::Tensor>> LoadInputs(const std::string& path, const std::vector<InputSpec>& model_inputs,
                                                   const at::Device& device);

}  // namespace graphcheck

#endif  // GRAPHCHECK_ENGINE_MODELS_H_
