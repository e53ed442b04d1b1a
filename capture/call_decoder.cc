#include "capture/call_decoder.h"

#include <cuda_runtime_api.h>  // cupti.h (via call_decoder.h) brings the generated parameter structs

namespace graphcheck::capture {
namespace {

using trace::MemcpyDirection;

MemcpyDirection FromRuntimeKind(cudaMemcpyKind kind) {
  switch (kind) {
    case cudaMemcpyHostToDevice:
      return MemcpyDirection::kHostToDevice;
    case cudaMemcpyDeviceToHost:
      return MemcpyDirection::kDeviceToHost;
    case cudaMemcpyDeviceToDevice:
      return MemcpyDirection::kDeviceToDevice;
    case cudaMemcpyHostToHost:
      return MemcpyDirection::kHostToHost;
    case cudaMemcpyDefault:
      return MemcpyDirection::kDefault;
  }
  return MemcpyDirection::kUnknown;
}

void SetStream(DecodedCall* call, CUstream stream) {
  call->has_stream = true;
  call->stream = stream;
}

void SetGeometry(DecodedCall* call, const dim3& grid, const dim3& block) {
  call->grid = {grid.x, grid.y, grid.z};
  call->block = {block.x, block.y, block.z};
}

template <typename Params>
void DecodeCopy(const Params* p, DecodedCall* call) {
  call->dst = p->dst;
  call->src = p->src;
  call->bytes = p->count;
  call->direction = FromRuntimeKind(p->kind);
}

// CUPTI names each parameter struct after its callback id (CUPTI_RUNTIME_TRACE_CBID_x <-> x_params), so one macro
// per parameter shape covers every version and per-thread-stream variant of a call.
// The runtime's kernel launches, copies, sets and allocations: fills `call` and returns true when `cbid` is one.
bool DecodeRuntimeWork(CUpti_CallbackId cbid, const void* params, DecodedCall* out) {
  DecodedCall& call = *out;
  switch (cbid) {
#define GC_LAUNCH(name)                                        \
  case CUPTI_RUNTIME_TRACE_CBID_##name: {                      \
    const auto* p = static_cast<const name##_params*>(params); \
    SetStream(&call, p->stream);                               \
    SetGeometry(&call, p->gridDim, p->blockDim);               \
    break;                                                     \
  }
    GC_LAUNCH(cudaLaunchKernel_v7000)
    GC_LAUNCH(cudaLaunchKernel_ptsz_v7000)
#undef GC_LAUNCH
#define GC_LAUNCH_EX(name)                                         \
  case CUPTI_RUNTIME_TRACE_CBID_##name: {                          \
    const auto* p = static_cast<const name##_params*>(params);     \
    if (p->config != nullptr) {                                    \
      SetStream(&call, p->config->stream);                         \
      SetGeometry(&call, p->config->gridDim, p->config->blockDim); \
    }                                                              \
    break;                                                         \
  }
    GC_LAUNCH_EX(cudaLaunchKernelExC_v11060)
    GC_LAUNCH_EX(cudaLaunchKernelExC_ptsz_v11060)
#undef GC_LAUNCH_EX
    case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020:
      DecodeCopy(static_cast<const cudaMemcpy_v3020_params*>(params), &call);
      break;
#define GC_COPY_ASYNC(name)                                    \
  case CUPTI_RUNTIME_TRACE_CBID_##name: {                      \
    const auto* p = static_cast<const name##_params*>(params); \
    DecodeCopy(p, &call);                                      \
    SetStream(&call, p->stream);                               \
    break;                                                     \
  }
      GC_COPY_ASYNC(cudaMemcpyAsync_v3020)
      GC_COPY_ASYNC(cudaMemcpyAsync_ptsz_v7000)
#undef GC_COPY_ASYNC
    case CUPTI_RUNTIME_TRACE_CBID_cudaMemset_v3020:
      call.bytes = static_cast<const cudaMemset_v3020_params*>(params)->count;
      break;
#define GC_SET_ASYNC(name)                                     \
  case CUPTI_RUNTIME_TRACE_CBID_##name: {                      \
    const auto* p = static_cast<const name##_params*>(params); \
    call.bytes = p->count;                                     \
    SetStream(&call, p->stream);                               \
    break;                                                     \
  }
      GC_SET_ASYNC(cudaMemsetAsync_v3020)
      GC_SET_ASYNC(cudaMemsetAsync_ptsz_v7000)
#undef GC_SET_ASYNC
#define GC_MALLOC_ASYNC(name)                                  \
  case CUPTI_RUNTIME_TRACE_CBID_##name: {                      \
    const auto* p = static_cast<const name##_params*>(params); \
    call.bytes = p->size;                                      \
    SetStream(&call, p->hStream);                              \
    break;                                                     \
  }
      GC_MALLOC_ASYNC(cudaMallocAsync_v11020)
      GC_MALLOC_ASYNC(cudaMallocAsync_ptsz_v11020)
#undef GC_MALLOC_ASYNC
    case CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020:
      call.bytes = static_cast<const cudaMalloc_v3020_params*>(params)->size;
      break;
    case CUPTI_RUNTIME_TRACE_CBID_cudaHostAlloc_v3020:
      call.bytes = static_cast<const cudaHostAlloc_v3020_params*>(params)->size;
      break;
    case CUPTI_RUNTIME_TRACE_CBID_cudaMallocHost_v3020:
      call.bytes = static_cast<const cudaMallocHost_v3020_params*>(params)->size;
      break;
    default:
      return false;
  }
  return true;
}

// The runtime's stream and event calls: fills `call` and returns true when `cbid` is one.
bool DecodeRuntimeStreamCall(CUpti_CallbackId cbid, const void* params, DecodedCall* out) {
  DecodedCall& call = *out;
  switch (cbid) {
#define GC_STREAM_ONLY(name, field)                                     \
  case CUPTI_RUNTIME_TRACE_CBID_##name:                                 \
    SetStream(&call, static_cast<const name##_params*>(params)->field); \
    break;
    GC_STREAM_ONLY(cudaStreamSynchronize_v3020, stream)
    GC_STREAM_ONLY(cudaStreamSynchronize_ptsz_v7000, stream)
    GC_STREAM_ONLY(cudaStreamQuery_v3020, stream)
    GC_STREAM_ONLY(cudaStreamQuery_ptsz_v7000, stream)
    GC_STREAM_ONLY(cudaStreamDestroy_v5050, stream)
    GC_STREAM_ONLY(cudaFreeAsync_v11020, hStream)
    GC_STREAM_ONLY(cudaFreeAsync_ptsz_v11020, hStream)
#undef GC_STREAM_ONLY
#define GC_EVENT(name)                                         \
  case CUPTI_RUNTIME_TRACE_CBID_##name: {                      \
    const auto* p = static_cast<const name##_params*>(params); \
    SetStream(&call, p->stream);                               \
    call.event = reinterpret_cast<CUevent>(p->event);          \
    break;                                                     \
  }
    GC_EVENT(cudaEventRecord_v3020)
    GC_EVENT(cudaEventRecord_ptsz_v7000)
    GC_EVENT(cudaEventRecordWithFlags_v11010)
    GC_EVENT(cudaEventRecordWithFlags_ptsz_v11010)
    GC_EVENT(cudaStreamWaitEvent_v3020)
    GC_EVENT(cudaStreamWaitEvent_ptsz_v7000)
#undef GC_EVENT
#define GC_STREAM_CREATE(name)                                                                         \
  case CUPTI_RUNTIME_TRACE_CBID_##name:                                                                \
    call.out_stream = reinterpret_cast<CUstream*>(static_cast<const name##_params*>(params)->pStream); \
    break;
    GC_STREAM_CREATE(cudaStreamCreate_v3020)
    GC_STREAM_CREATE(cudaStreamCreateWithFlags_v5000)
    GC_STREAM_CREATE(cudaStreamCreateWithPriority_v5050)
#undef GC_STREAM_CREATE
    default:
      return false;
  }
  return true;
}

// The runtime's captures and graphs: fills `call` and returns true when `cbid` is one.
bool DecodeRuntimeGraphCall(CUpti_CallbackId cbid, const void* params, DecodedCall* out) {
  DecodedCall& call = *out;
  switch (cbid) {
#define GC_BEGIN_CAPTURE(name)                                 \
  case CUPTI_RUNTIME_TRACE_CBID_##name: {                      \
    const auto* p = static_cast<const name##_params*>(params); \
    SetStream(&call, p->stream);                               \
    call.capture_mode = static_cast<int>(p->mode);             \
    break;                                                     \
  }
    GC_BEGIN_CAPTURE(cudaStreamBeginCapture_v10000)
    GC_BEGIN_CAPTURE(cudaStreamBeginCapture_ptsz_v10000)
    GC_BEGIN_CAPTURE(cudaStreamBeginCaptureToGraph_v12030)
    GC_BEGIN_CAPTURE(cudaStreamBeginCaptureToGraph_ptsz_v12030)
#undef GC_BEGIN_CAPTURE
#define GC_END_CAPTURE(name)                                   \
  case CUPTI_RUNTIME_TRACE_CBID_##name: {                      \
    const auto* p = static_cast<const name##_params*>(params); \
    SetStream(&call, p->stream);                               \
    call.out_graph = reinterpret_cast<CUgraph*>(p->pGraph);    \
    break;                                                     \
  }
    GC_END_CAPTURE(cudaStreamEndCapture_v10000)
    GC_END_CAPTURE(cudaStreamEndCapture_ptsz_v10000)
#undef GC_END_CAPTURE
#define GC_EXEC_ON_STREAM(name)                                \
  case CUPTI_RUNTIME_TRACE_CBID_##name: {                      \
    const auto* p = static_cast<const name##_params*>(params); \
    SetStream(&call, p->stream);                               \
    call.exec = reinterpret_cast<CUgraphExec>(p->graphExec);   \
    break;                                                     \
  }
    GC_EXEC_ON_STREAM(cudaGraphLaunch_v10000)
    GC_EXEC_ON_STREAM(cudaGraphLaunch_ptsz_v10000)
    GC_EXEC_ON_STREAM(cudaGraphUpload_v10000)
    GC_EXEC_ON_STREAM(cudaGraphUpload_ptsz_v10000)
#undef GC_EXEC_ON_STREAM
#define GC_INSTANTIATE(name)                                       \
  case CUPTI_RUNTIME_TRACE_CBID_##name: {                          \
    const auto* p = static_cast<const name##_params*>(params);     \
    call.graph = reinterpret_cast<CUgraph>(p->graph);              \
    call.out_exec = reinterpret_cast<CUgraphExec*>(p->pGraphExec); \
    break;                                                         \
  }
    GC_INSTANTIATE(cudaGraphInstantiate_v12000)
    GC_INSTANTIATE(cudaGraphInstantiateWithFlags_v11040)
    GC_INSTANTIATE(cudaGraphInstantiateWithParams_v12000)
    GC_INSTANTIATE(cudaGraphInstantiateWithParams_ptsz_v12000)
#undef GC_INSTANTIATE
    case CUPTI_RUNTIME_TRACE_CBID_cudaGraphDestroy_v10000:
      call.graph = reinterpret_cast<CUgraph>(static_cast<const cudaGraphDestroy_v10000_params*>(params)->graph);
      break;
    case CUPTI_RUNTIME_TRACE_CBID_cudaGraphExecDestroy_v10000:
      call.exec =
          reinterpret_cast<CUgraphExec>(static_cast<const cudaGraphExecDestroy_v10000_params*>(params)->graphExec);
      break;
    default:
      return false;
  }
  return true;
}

}  // namespace

DecodedCall DecodeRuntimeCall(CUpti_CallbackId cbid, const void* params) {
  DecodedCall call;
  if (!DecodeRuntimeWork(cbid, params, &call) && !DecodeRuntimeStreamCall(cbid, params, &call)) {
    DecodeRuntimeGraphCall(cbid, params, &call);
  }
  return call;
}

DecodedCall DecodeDriverCall(CUpti_CallbackId cbid, const void* params) {
  DecodedCall call;
  switch (cbid) {
#define GC_DRIVER_LAUNCH(name)                                 \
  case CUPTI_DRIVER_TRACE_CBID_##name: {                       \
    const auto* p = static_cast<const name##_params*>(params); \
    SetStream(&call, p->hStream);                              \
    call.grid = {p->gridDimX, p->gridDimY, p->gridDimZ};       \
    call.block = {p->blockDimX, p->blockDimY, p->blockDimZ};   \
    break;                                                     \
  }
    GC_DRIVER_LAUNCH(cuLaunchKernel)
    GC_DRIVER_LAUNCH(cuLaunchKernel_ptsz)
#undef GC_DRIVER_LAUNCH
#define GC_DRIVER_LAUNCH_EX(name)                                                      \
  case CUPTI_DRIVER_TRACE_CBID_##name: {                                               \
    const auto* p = static_cast<const name##_params*>(params);                         \
    if (p->config != nullptr) {                                                        \
      SetStream(&call, p->config->hStream);                                            \
      call.grid = {p->config->gridDimX, p->config->gridDimY, p->config->gridDimZ};     \
      call.block = {p->config->blockDimX, p->config->blockDimY, p->config->blockDimZ}; \
    }                                                                                  \
    break;                                                                             \
  }
    GC_DRIVER_LAUNCH_EX(cuLaunchKernelEx)
    GC_DRIVER_LAUNCH_EX(cuLaunchKernelEx_ptsz)
#undef GC_DRIVER_LAUNCH_EX
#define GC_DRIVER_STREAM(name)                                            \
  case CUPTI_DRIVER_TRACE_CBID_##name:                                    \
    SetStream(&call, static_cast<const name##_params*>(params)->hStream); \
    break;
    GC_DRIVER_STREAM(cuStreamSynchronize)
    GC_DRIVER_STREAM(cuStreamSynchronize_ptsz)
#undef GC_DRIVER_STREAM
#define GC_DRIVER_END(name)                                    \
  case CUPTI_DRIVER_TRACE_CBID_##name: {                       \
    const auto* p = static_cast<const name##_params*>(params); \
    SetStream(&call, p->hStream);                              \
    call.out_graph = p->phGraph;                               \
    break;                                                     \
  }
    GC_DRIVER_END(cuStreamEndCapture)
    GC_DRIVER_END(cuStreamEndCapture_ptsz)
#undef GC_DRIVER_END
#define GC_DRIVER_BEGIN(name)                                  \
  case CUPTI_DRIVER_TRACE_CBID_##name: {                       \
    const auto* p = static_cast<const name##_params*>(params); \
    SetStream(&call, p->hStream);                              \
    call.capture_mode = static_cast<int>(p->mode);             \
    break;                                                     \
  }
    GC_DRIVER_BEGIN(cuStreamBeginCapture_v2)
    GC_DRIVER_BEGIN(cuStreamBeginCapture_v2_ptsz)
#undef GC_DRIVER_BEGIN
    default:
      break;
  }
  return call;
}

}  // namespace graphcheck::capture
