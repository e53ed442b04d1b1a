#include "engine/graphed_callables.h"

#include <chrono>
#include <utility>

#include <ATen/autocast_mode.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/autograd/custom_function.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/plural.h"
#include "engine/torch_edge.h"

namespace graphcheck {

// What one graphed callable replays: the graphs and the static tensors they read and write.
struct GraphedCallable::State {
  at::cuda::CUDAGraph forward_graph{/*keep_graph=*/true};
  at::cuda::CUDAGraph backward_graph{/*keep_graph=*/true};
  bool has_backward = false;
  size_t user_inputs = 0;
  std::vector<at::Tensor> static_inputs;  // user inputs, then parameters
  std::vector<at::Tensor> static_outputs;
  std::vector<at::Tensor> static_grad_outputs;  // undefined where an output does not require grad
  std::vector<at::Tensor> static_grad_inputs;   // per static input; undefined where it gets no gradient
};

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;
using StatePtr = std::shared_ptr<GraphedCallable::State>;

// Keeps a callable's state alive in the autograd context until backward has run.
struct StateCapsule : torch::CustomClassHolder {
  explicit StateCapsule(StatePtr s) : state(std::move(s)) {}
  StatePtr state;
};

// The autograd function of a graphed callable (torch/cuda/graphs.py's Graphed).
class GraphedFunction : public torch::autograd::Function<GraphedFunction> {
 public:
  static variable_list forward(AutogradContext* ctx, StatePtr state, at::TensorList inputs) {
    for (size_t i = 0; i < state->user_inputs; ++i) {
      if (state->static_inputs[i].data_ptr() != inputs[i].data_ptr()) state->static_inputs[i].copy_(inputs[i]);
    }
    state->forward_graph.replay();
    ctx->saved_data["state"] = c10::IValue::make_capsule(c10::make_intrusive<StateCapsule>(state));
    variable_list outputs;
    for (const at::Tensor& output : state->static_outputs) outputs.push_back(output.detach());
    return outputs;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const StatePtr state =
        c10::static_intrusive_pointer_cast<StateCapsule>(ctx->saved_data["state"].toCapsule())->state;
    TORCH_CHECK(state->has_backward, "graphcheck: this graphed callable was captured without a backward graph");
    for (size_t i = 0; i < grads.size() && i < state->static_grad_outputs.size(); ++i) {
      at::Tensor& slot = state->static_grad_outputs[i];
      if (!slot.defined()) continue;
      if (!grads[i].defined()) {
        slot.zero_();
      } else if (slot.data_ptr() != grads[i].data_ptr()) {
        slot.copy_(grads[i]);
      }
    }
    state->backward_graph.replay();
    variable_list result = {at::Tensor()};  // the state argument
    for (const at::Tensor& grad : state->static_grad_inputs) result.push_back(grad.defined() ? grad.detach() : grad);
    return result;
  }
};

cudaStreamCaptureMode ToCudaMode(CaptureErrorMode mode) {
  switch (mode) {
    case CaptureErrorMode::kThreadLocal:
      return cudaStreamCaptureModeThreadLocal;
    case CaptureErrorMode::kRelaxed:
      return cudaStreamCaptureModeRelaxed;
    case CaptureErrorMode::kGlobal:
      break;
  }
  return cudaStreamCaptureModeGlobal;
}

// The unsupported situations torch.cuda.make_graphed_callables rejects, as a Status.
absl::Status ValidateCallables(const std::vector<Callable>& callables,
                               const std::vector<std::vector<c10::IValue>>& sample_args, const GraphOptions& options) {
  if (callables.empty() || callables.size() != sample_args.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "make_graphed_callables needs one sample-argument list per callable (",
        Plural(callables.size(), "callable", "callables"), ", ", Plural(sample_args.size(), "list", "lists"), ")"));
  }
  if (options.warmup_iterations < 0) return absl::InvalidArgumentError("warmup iterations must be 0 or more");
  if (at::autocast::is_autocast_enabled(at::kCUDA) && at::autocast::is_autocast_cache_enabled()) {
    return absl::FailedPreconditionError(
        "autocast is on with its weight cache: the cache would hold casts made during capture that replays never "
        "refresh; turn the cache off (at::autocast::set_autocast_cache_enabled(false), or cache_enabled=False)");
  }
  for (size_t i = 0; i < callables.size(); ++i) {
    const Callable& callable = callables[i];
    if (!callable.hooks.empty()) {
      return absl::FailedPreconditionError(
          absl::StrCat("'", callable.name, "' has module hooks (", absl::StrJoin(callable.hooks, ", "),
                       "): they would run once at capture and never on replay; remove them before graphing"));
    }
    for (size_t b = 0; b < callable.buffers.size(); ++b) {
      if (callable.buffers[b].requires_grad()) {
        return absl::FailedPreconditionError(absl::StrCat("'", callable.name, "' has a buffer (#", b,
                                                          ") that requires grad; graphed modules need buffers with "
                                                          "requires_grad=False"));
      }
    }
    for (size_t a = 0; a < sample_args[i].size(); ++a) {
      const c10::IValue& arg = sample_args[i][a];
      if (!arg.isTensor()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "argument ", a, " of '", callable.name, "' is a ", arg.tagKind(),
            ", not a tensor: graphed callables take tensors only; bind other arguments into the callable"));
      }
    }
  }
  return absl::OkStatus();
}

// Runs one phase: NVTX range, wall time, the observer.
absl::Status RunPhase(const GraphOptions& options, absl::string_view phase, const std::function<absl::Status()>& body) {
  const auto start = std::chrono::steady_clock::now();
  absl::Status status;
  {
    NvtxRange range(phase);
    status = body();
  }
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (options.on_phase) options.on_phase(phase, ms, status.ok());
  return status;
}

std::vector<at::Tensor> RequiringGrad(const std::vector<at::Tensor>& tensors) {
  std::vector<at::Tensor> result;
  for (const at::Tensor& t : tensors) {
    if (t.defined() && t.requires_grad()) result.push_back(t);
  }
  return result;
}

}  // namespace

std::vector<at::Tensor> GraphedCallable::operator()(const std::vector<at::Tensor>& inputs) const {
  TORCH_CHECK(inputs.size() == state_->user_inputs, "graphcheck: graphed callable takes ", state_->user_inputs,
              " inputs, got ", inputs.size());
  variable_list all(inputs.begin(), inputs.end());
  all.insert(all.end(), state_->static_inputs.begin() + state_->user_inputs, state_->static_inputs.end());
  // A TensorList, not the vector itself: autograd::Function only sees tensors in a TensorList as inputs.
  return GraphedFunction::apply(state_, at::TensorList(all));
}

size_t GraphedCallable::forward_nodes() const { return GraphNodeCount(state_->forward_graph); }
size_t GraphedCallable::backward_nodes() const {
  return state_->has_backward ? GraphNodeCount(state_->backward_graph) : 0;
}

absl::StatusOr<GraphedCallables> MakeGraphedCallables(const std::vector<Callable>& callables,
                                                      const std::vector<std::vector<c10::IValue>>& sample_args,
                                                      const GraphOptions& options) {
  if (absl::Status s = ValidateCallables(callables, sample_args, options); !s.ok()) return s;
  const size_t n = callables.size();
  std::vector<std::shared_ptr<GraphedCallable::State>> states(n);
  for (size_t i = 0; i < n; ++i) {
    auto& state = states[i];
    state = std::make_shared<GraphedCallable::State>();
    for (const c10::IValue& arg : sample_args[i]) state->static_inputs.push_back(arg.toTensor());
    state->user_inputs = state->static_inputs.size();
    state->static_inputs.insert(state->static_inputs.end(), callables[i].parameters.begin(),
                                callables[i].parameters.end());
    for (auto& generator : options.generators) {
      state->forward_graph.register_generator_state(generator);
      state->backward_graph.register_generator_state(generator);
    }
  }

  absl::Status status = RunPhase(options, "warmup", [&] {
    return CallTorch("warmup", [&] {
      c10::cuda::device_synchronize();
      c10::cuda::CUDAStreamGuard side(c10::cuda::getStreamFromPool());
      for (size_t i = 0; i < n; ++i) {
        const std::vector<at::Tensor> differentiable = RequiringGrad(states[i]->static_inputs);
        for (int w = 0; w < options.warmup_iterations; ++w) {
          const std::vector<at::Tensor> outputs = RequiringGrad(callables[i].forward(std::vector<at::Tensor>(
              states[i]->static_inputs.begin(), states[i]->static_inputs.begin() + states[i]->user_inputs)));
          if (outputs.empty() || differentiable.empty()) continue;
          std::vector<at::Tensor> grad_outputs;
          for (const at::Tensor& o : outputs) grad_outputs.push_back(at::empty_like(o));
          torch::autograd::grad(outputs, differentiable, grad_outputs, /*retain_graph=*/false,
                                /*create_graph=*/false, options.allow_unused_input);
        }
      }
      c10::cuda::device_synchronize();
    });
  });
  if (!status.ok()) return status;

  const at::cuda::MempoolId_t pool = at::cuda::graph_pool_handle();
  const cudaStreamCaptureMode mode = ToCudaMode(options.capture_error_mode);
  status = RunPhase(options, "forward-capture", [&] {
    for (size_t i = 0; i < n; ++i) {
      auto& state = *states[i];
      const std::vector<at::Tensor> user_inputs(state.static_inputs.begin(),
                                                state.static_inputs.begin() + state.user_inputs);
      absl::Status s =
          CaptureGraph(&state.forward_graph, pool, mode, absl::StrCat("forward capture of '", callables[i].name, "'"),
                       [&] { state.static_outputs = callables[i].forward(user_inputs); });
      if (!s.ok()) return s;
      s = CallTorch("forward graph instantiation", [&] { state.forward_graph.instantiate(); });
      if (!s.ok()) return s;
    }
    return absl::OkStatus();
  });
  if (!status.ok()) return status;

  status = RunPhase(options, "backward-capture", [&] {
    for (size_t k = n; k-- > 0;) {
      auto& state = *states[k];
      const std::vector<at::Tensor> outputs = RequiringGrad(state.static_outputs);
      const std::vector<at::Tensor> differentiable = RequiringGrad(state.static_inputs);
      state.has_backward = !outputs.empty() && !differentiable.empty();
      if (!state.has_backward) continue;  // nothing to differentiate (evaluation)
      std::vector<at::Tensor> grad_outputs;
      absl::Status s = CallTorch("backward capture", [&] {
        for (const at::Tensor& o : state.static_outputs) {
          state.static_grad_outputs.push_back(o.requires_grad() ? at::empty_like(o) : at::Tensor());
          if (o.requires_grad()) grad_outputs.push_back(state.static_grad_outputs.back());
        }
      });
      if (!s.ok()) return s;
      std::vector<at::Tensor> grads;
      s = CaptureGraph(&state.backward_graph, pool, mode, absl::StrCat("backward capture of '", callables[k].name, "'"),
                       [&] {
                         grads = torch::autograd::grad(outputs, differentiable, grad_outputs, /*retain_graph=*/false,
                                                       /*create_graph=*/false, options.allow_unused_input);
                       });
      if (!s.ok()) return s;
      s = CallTorch("backward graph instantiation", [&] { state.backward_graph.instantiate(); });
      if (!s.ok()) return s;
      size_t next = 0;
      for (const at::Tensor& input : state.static_inputs) {
        state.static_grad_inputs.push_back(input.requires_grad() ? grads[next++] : at::Tensor());
      }
    }
    return absl::OkStatus();
  });
  if (!status.ok()) return status;

  GraphedCallables result;
  result.pool = pool;
  for (auto& state : states) result.callables.emplace_back(std::move(state));
  return result;
}

size_t GraphPoolBytes(at::cuda::MempoolId_t pool) {
  size_t bytes = 0;
  for (const auto& segment : c10::cuda::CUDACachingAllocator::snapshot(pool, /*include_traces=*/false).segments) {
    if (segment.owner_private_pool_id == pool) bytes += segment.total_size;
  }
  return bytes;
}

}  // namespace graphcheck
