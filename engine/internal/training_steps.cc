#include "engine/internal/training_steps.h"

#include <chrono>
#include <optional>

#include <ATen/autocast_mode.h>
#include <ATen/core/grad_mode.h>
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAFunctions.h>

#include "engine/torch_edge.h"

namespace graphcheck {
namespace {

// The forward and the backward inside NVTX ranges "graphcheck:graphable", when marked: the parts MakeGraphedCallables
// graphs, so that the forecast from the eager steps keeps the loss and the optimizer step eager, as the graphed
// steps run them (analysis/launch_metrics.h).
class GraphablePart {
 public:
  // `host_us` (may be null) accumulates the part's host time.
  GraphablePart(bool mark, double* host_us) : host_us_(host_us), start_(std::chrono::steady_clock::now()) {
    if (mark) range_.emplace("graphable");
  }
  ~GraphablePart() {
    if (host_us_ != nullptr) {
      *host_us_ += std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start_).count();
    }
  }

 private:
  std::optional<NvtxRange> range_;
  double* host_us_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace

at::Tensor LossOf(const std::vector<at::Tensor>& outputs) {
  TORCH_CHECK(!outputs.empty(), "the model returned no tensor");
  const at::Tensor first = outputs.front().to(at::kFloat);
  return first.dim() == 0 ? first : first.square().mean();
}

ForwardFn WithAutocast(ForwardFn forward, at::ScalarType dtype) {
  return [forward = std::move(forward), dtype](const std::vector<at::Tensor>& inputs) {
    const bool was_enabled = at::autocast::is_autocast_enabled(at::kCUDA);
    const at::ScalarType was_dtype = at::autocast::get_autocast_dtype(at::kCUDA);
    const bool was_cached = at::autocast::is_autocast_cache_enabled();
    at::autocast::set_autocast_enabled(at::kCUDA, true);
    at::autocast::set_autocast_dtype(at::kCUDA, dtype);
    at::autocast::set_autocast_cache_enabled(false);
    struct Restore {
      bool enabled, cached;
      at::ScalarType dtype;
      ~Restore() {
        at::autocast::set_autocast_enabled(at::kCUDA, enabled);
        at::autocast::set_autocast_dtype(at::kCUDA, dtype);
        at::autocast::set_autocast_cache_enabled(cached);
      }
    } restore{was_enabled, was_cached, was_dtype};
    return forward(inputs);
  };
}

ModelState::ModelState(const Model& model) {
  at::NoGradGuard no_grad;
  for (NamedTensor& t : model.named_state()) {
    t.tensor = t.tensor.detach().clone();
    saved_.push_back(std::move(t));
  }
}

void ModelState::Restore(const Model& model) const {
  at::NoGradGuard no_grad;
  for (const NamedTensor& now : model.named_state()) {
    for (const NamedTensor& saved : saved_) {
      if (saved.role == now.role && saved.name == now.name && saved.tensor.sizes() == now.tensor.sizes()) {
        now.tensor.detach().copy_(saved.tensor);
      }
    }
  }
}

ForwardFn KeepingFirstOutputs(ForwardFn forward, std::vector<at::Tensor>* kept) {
  return [forward = std::move(forward), kept](const std::vector<at::Tensor>& inputs) {
    std::vector<at::Tensor> outputs = forward(inputs);
    if (kept->empty()) {
      at::NoGradGuard no_grad;
      for (const at::Tensor& t : outputs) kept->push_back(t.detach().clone());
    }
    return outputs;
  };
}

StepFn SnapshottingFirstStep(StepFn step, const Model& model, const std::vector<at::Tensor>* first_outputs,
                             RunSnapshot* snapshot) {
  return [step = std::move(step), &model, first_outputs, snapshot](const std::vector<at::Tensor>& batch) {
    at::Tensor loss = step(batch);
    if (!snapshot->took_first_step) snapshot->TakeFirstStep(*first_outputs, model.named_state());
    return loss;
  };
}

at::Tensor RunStep(const ForwardFn& forward, const std::vector<at::Tensor>& batch, FusedOptimizer* optimizer,
                   bool grads_in_place, bool mark_graphable, double* graphable_host_us) {
  auto forward_part = [&] {
    const GraphablePart part(mark_graphable, graphable_host_us);
    return forward(batch);
  };
  if (optimizer == nullptr) return LossOf(forward_part()).detach();
  optimizer->ZeroGrad(/*set_to_none=*/!grads_in_place);
  at::Tensor loss = LossOf(forward_part());
  {
    const GraphablePart part(mark_graphable, graphable_host_us);
    loss.backward();
  }
  optimizer->Step();
  return loss.detach();
}

absl::Status RunSteps(int steps, const std::vector<std::vector<at::Tensor>>& batches, const StepFn& step,
                      std::vector<double>* step_us, std::vector<double>* losses) {
  return CallTorch("step", [&] {
    std::vector<at::cuda::CUDAEvent> events;
    if (step_us != nullptr) {
      for (int i = 0; i <= steps; ++i) events.emplace_back(cudaEventDefault);
    }
    std::vector<at::Tensor> loss_tensors;
    for (int i = 0; i <= steps; ++i) {
      if (step_us == nullptr) {
        loss_tensors.push_back(step(batches[i % batches.size()]));
        continue;
      }
      if (i > 0) events[i - 1].record();
      NvtxRange range("step");
      loss_tensors.push_back(step(batches[i % batches.size()]));
    }
    if (step_us != nullptr) events[steps].record();
    // Losses come back through pinned memory: a pageable copy here would be the engine's own finding.
    const at::Tensor all = at::empty({steps + 1}, at::TensorOptions(at::kDouble).pinned_memory(true));
    all.copy_(at::stack(loss_tensors).to(at::kDouble), /*non_blocking=*/true);
    c10::cuda::device_synchronize();
    if (step_us != nullptr) {
      for (int i = 1; i <= steps; ++i) step_us->push_back(1000.0 * events[i - 1].elapsed_time(events[i]));
    }
    if (losses != nullptr) losses->assign(all.data_ptr<double>(), all.data_ptr<double>() + all.numel());
  });
}

}  // namespace graphcheck
