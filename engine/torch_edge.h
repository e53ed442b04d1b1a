// The LibTorch edge of the engine: calling into LibTorch without letting an exception out (c10::Error and the rest
// become a Status), capturing a CUDA graph so that a failed capture is always ended, and the engine's NVTX ranges.
#ifndef GRAPHCHECK_ENGINE_TORCH_EDGE_H_
#define GRAPHCHECK_ENGINE_TORCH_EDGE_H_

#include <functional>
#include <string>

#include <ATen/cuda/CUDAGraph.h>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace graphcheck {

// Runs `body`; an exception becomes Internal("WHAT: MESSAGE") with one line of the message (LibTorch appends its C++
// backtrace; TorchScript puts the reason last).
absl::Status CallTorch(absl::string_view what, const std::function<void()>& body);

// Captures what `body` enqueues into `graph` on a dedicated side stream, allocating from `pool` (torch.cuda.graph's
// behaviour: synchronize and release cached blocks first). When the body or the capture fails, the capture is ended
// and the sticky-free CUDA error state cleared, so the process can go on and report.
absl::Status CaptureGraph(at::cuda::CUDAGraph* graph, at::cuda::MempoolId_t pool, cudaStreamCaptureMode mode,
                          absl::string_view what, const std::function<void()>& body);

// The nodes of a graph captured with keep_graph=true; 0 when CUDA cannot tell.
size_t GraphNodeCount(at::cuda::CUDAGraph& graph);

// An NVTX range "graphcheck:NAME" for as long as it lives; the recorder turns these into trace ranges.
class NvtxRange {
 public:
  explicit NvtxRange(absl::string_view name);
  ~NvtxRange();
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;
};

}  // namespace graphcheck

#endif  // GRAPHCHECK_ENGINE_TORCH_EDGE_H_
