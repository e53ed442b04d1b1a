// graphcheck::MakeGraphedCallables: torch.cuda.make_graphed_callables for LibTorch, which has none.
//
// Same semantics as the Python function: warmup iterations on a side stream, forward graphs captured in order and
// backward graphs in reverse order into one shared memory pool, and per callable an autograd function that copies the
// inputs into the static inputs, replays the forward graph, and replays the backward graph when autograd asks for
// gradients (parameter gradients flow back through autograd, so any optimizer works). The default CUDA generator is
// registered by every capture (dropout stays correct); other generators are registered from the options.
//
// Unlike the Python function, nothing here throws: unsupported situations and CUDA errors during capture come back
// as a Status saying which callable, which phase and why; a failed capture is ended so the process can go on.
#ifndef GRAPHCHECK_ENGINE_GRAPHED_CALLABLES_H_
#define GRAPHCHECK_ENGINE_GRAPHED_CALLABLES_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/core/ivalue.h>
#include <ATen/cuda/CUDAGraph.h>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace graphcheck {

// Something to graph: a function of tensors and the state it reads. Built from a torch::nn module, a TorchScript
// module or a plain function.
struct Callable {
  std::string name;  // for messages
  std::function<std::vector<at::Tensor>(const std::vector<at::Tensor>&)> forward;
  std::vector<at::Tensor> parameters;  // receive gradients from the graphed backward
  std::vector<at::Tensor> buffers;     // must not require grad
  std::vector<std::string> hooks;      // hooks the module carries: unsupported (they would run at capture only)
};

enum class CaptureErrorMode { kGlobal, kThreadLocal, kRelaxed };

struct GraphOptions {
  int warmup_iterations = 3;  // 11 is recommended with DDP, whose buckets rebuild after the first iterations
  bool allow_unused_input = false;
  CaptureErrorMode capture_error_mode = CaptureErrorMode::kGlobal;
  // Generators other than the default CUDA one whose random state the graphs must advance on every replay.
  std::vector<at::Generator> generators;
  // Called after each phase ("warmup", "forward-capture", "backward-capture") with its wall time, also when it
  // failed; the phases are NVTX ranges "graphcheck:PHASE" as well.
  std::function<void(absl::string_view phase, double ms, bool ok)> on_phase;
};

// One graphed callable: call it like the original; its outputs are views of static tensors that the next call
// overwrites (as in PyTorch).
class GraphedCallable {
 public:
  struct State;
  explicit GraphedCallable(std::shared_ptr<State> state) : state_(std::move(state)) {}

  std::vector<at::Tensor> operator()(const std::vector<at::Tensor>& inputs) const;
  size_t forward_nodes() const;
  size_t backward_nodes() const;  // 0 when nothing required grad

 private:
  std::shared_ptr<State> state_;
};

struct GraphedCallables {
  std::vector<GraphedCallable> callables;
  at::cuda::MempoolId_t pool;  // the shared memory pool
};

// `sample_args[i]` are the arguments of `callables[i]`: tensors only (a non-tensor is an InvalidArgument naming it),
// with requires_grad set on those the backward should differentiate. FailedPrecondition for module hooks, buffers
// that require grad, or autocast with its cache on; Internal with the CUDA error for a failed capture.
absl::StatusOr<GraphedCallables> MakeGraphedCallables(const std::vector<Callable>& callables,
                                                      const std::vector<std::vector<c10::IValue>>& sample_args,
                                                      const GraphOptions& options = {});

// Memory the caching allocator holds for a graph pool, in bytes.
size_t GraphPoolBytes(at::cuda::MempoolId_t pool);

}  // namespace graphcheck

#endif  // GRAPHCHECK_ENGINE_GRAPHED_CALLABLES_H_
