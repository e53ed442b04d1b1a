#include "engine/torch_edge.h"

#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>

#include <exception>

#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/util/Exception.h>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace graphcheck {
namespace {

// One line for a LibTorch error: its first line, except for TorchScript interpreter errors, whose first line only says
// that the interpreter failed and whose last line ("RuntimeError: ...") says why.
std::string Summary(absl::string_view text) {
  text = absl::StripAsciiWhitespace(text);
  const absl::string_view first = text.substr(0, text.find('\n'));
  if (!absl::StartsWith(first, "The following operation failed in the TorchScript interpreter")) {
    return std::string(first);
  }
  const size_t last = text.rfind('\n');
  return std::string(last == absl::string_view::npos ? text : text.substr(last + 1));
}

}  // namespace

absl::Status CallTorch(absl::string_view what, const std::function<void()>& body) {
  try {
    body();
    return absl::OkStatus();
  } catch (const c10::Error& e) {
    return absl::InternalError(absl::StrCat(what, ": ", Summary(e.what_without_backtrace())));
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat(what, ": ", Summary(e.what())));
  }
}

absl::Status CaptureGraph(at::cuda::CUDAGraph* graph, at::cuda::MempoolId_t pool, cudaStreamCaptureMode mode,
                          absl::string_view what, const std::function<void()>& body) {
  // One capture stream for the process, as torch.cuda.graph keeps one per class.
  static const c10::cuda::CUDAStream capture_stream = c10::cuda::getStreamFromPool();
  if (absl::Status s = CallTorch(what,
                                 [] {
                                   c10::cuda::device_synchronize();
                                   c10::cuda::CUDACachingAllocator::emptyCache();
                                 });
      !s.ok()) {
    return s;
  }
  c10::cuda::CUDAStreamGuard guard(capture_stream);
  if (absl::Status s = CallTorch(what, [&] { graph->capture_begin(pool, mode); }); !s.ok()) return s;
  absl::Status body_status = CallTorch(what, body);
  absl::Status end_status = CallTorch(what, [&] { graph->capture_end(); });
  if (!body_status.ok() || !end_status.ok()) {
    // A capture invalidated by a forbidden call leaves a non-sticky error behind; clear it so later work runs.
    (void)cudaGetLastError();
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(capture_stream.stream(), &status) == cudaSuccess &&
        status != cudaStreamCaptureStatusNone) {
      cudaGraph_t abandoned = nullptr;
      if (cudaStreamEndCapture(capture_stream.stream(), &abandoned) == cudaSuccess && abandoned != nullptr) {
        cudaGraphDestroy(abandoned);
      }
      (void)cudaGetLastError();
    }
  }
  return body_status.ok() ? end_status : body_status;
}

size_t GraphNodeCount(at::cuda::CUDAGraph& graph) {
  size_t count = 0;
  return cudaGraphGetNodes(graph.raw_cuda_graph(), nullptr, &count) == cudaSuccess ? count : 0;
}

NvtxRange::NvtxRange(absl::string_view name) { nvtxRangePushA(absl::StrCat("graphcheck:", name).c_str()); }
NvtxRange::~NvtxRange() { nvtxRangePop(); }

}  // namespace graphcheck
