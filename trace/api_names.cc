#include "trace/api_names.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/strip.h"
#include "absl/types/span.h"

namespace graphcheck::trace {
namespace {

bool StripOneSuffix(absl::string_view* name) {
  if (absl::ConsumeSuffix(name, "_ptsz") || absl::ConsumeSuffix(name, "_ptds")) return true;
  // _v<digits>
  const size_t underscore = name->rfind('_');
  if (underscore == absl::string_view::npos || underscore + 2 > name->size() || (*name)[underscore + 1] != 'v') {
    return false;
  }
  const absl::string_view digits = name->substr(underscore + 2);
  if (digits.empty() || !std::all_of(digits.begin(), digits.end(), absl::ascii_isdigit)) return false;
  name->remove_suffix(name->size() - underscore);
  return true;
}

using KindEntry = std::pair<absl::string_view, ApiKind>;

// Launches, captures, and the calls that wait on or query the GPU.
constexpr KindEntry kExecutionKinds[] = {
    // Launches.
    {"cudaLaunchKernel", ApiKind::kKernelLaunch},
    {"cudaLaunchKernelExC", ApiKind::kKernelLaunch},
    {"cudaLaunchCooperativeKernel", ApiKind::kKernelLaunch},
    {"cuLaunchKernel", ApiKind::kKernelLaunch},
    {"cuLaunchKernelEx", ApiKind::kKernelLaunch},
    {"cuLaunchCooperativeKernel", ApiKind::kKernelLaunch},
    // Capture.
    {"cudaStreamBeginCapture", ApiKind::kCaptureBegin},
    {"cudaStreamBeginCaptureToGraph", ApiKind::kCaptureBegin},
    {"cuStreamBeginCapture", ApiKind::kCaptureBegin},
    {"cuStreamBeginCaptureToGraph", ApiKind::kCaptureBegin},
    {"cudaStreamEndCapture", ApiKind::kCaptureEnd},
    {"cuStreamEndCapture", ApiKind::kCaptureEnd},
    // Synchronization and queries.
    {"cudaStreamSynchronize", ApiKind::kStreamSynchronize},
    {"cuStreamSynchronize", ApiKind::kStreamSynchronize},
    {"cudaDeviceSynchronize", ApiKind::kDeviceSynchronize},
    {"cudaThreadSynchronize", ApiKind::kDeviceSynchronize},
    {"cuCtxSynchronize", ApiKind::kDeviceSynchronize},
    {"cudaEventSynchronize", ApiKind::kEventSynchronize},
    {"cuEventSynchronize", ApiKind::kEventSynchronize},
    {"cudaStreamQuery", ApiKind::kStreamQuery},
    {"cuStreamQuery", ApiKind::kStreamQuery},
    {"cudaEventQuery", ApiKind::kEventQuery},
    {"cuEventQuery", ApiKind::kEventQuery},
};

// Copies and sets.
constexpr KindEntry kTransferKinds[] = {
    {"cudaMemcpy", ApiKind::kMemcpy},
    {"cudaMemcpy2D", ApiKind::kMemcpy},
    {"cudaMemcpy3D", ApiKind::kMemcpy},
    {"cudaMemcpyPeer", ApiKind::kMemcpy},
    {"cudaMemcpyToSymbol", ApiKind::kMemcpy},
    {"cudaMemcpyFromSymbol", ApiKind::kMemcpy},
    {"cuMemcpy", ApiKind::kMemcpy},
    {"cuMemcpyHtoD", ApiKind::kMemcpy},
    {"cuMemcpyDtoH", ApiKind::kMemcpy},
    {"cuMemcpyDtoD", ApiKind::kMemcpy},
    {"cudaMemcpyAsync", ApiKind::kMemcpyAsync},
    {"cudaMemcpy2DAsync", ApiKind::kMemcpyAsync},
    {"cudaMemcpy3DAsync", ApiKind::kMemcpyAsync},
    {"cudaMemcpyPeerAsync", ApiKind::kMemcpyAsync},
    {"cudaMemcpyToSymbolAsync", ApiKind::kMemcpyAsync},
    {"cudaMemcpyFromSymbolAsync", ApiKind::kMemcpyAsync},
    {"cuMemcpyAsync", ApiKind::kMemcpyAsync},
    {"cuMemcpyHtoDAsync", ApiKind::kMemcpyAsync},
    {"cuMemcpyDtoHAsync", ApiKind::kMemcpyAsync},
    {"cuMemcpyDtoDAsync", ApiKind::kMemcpyAsync},
    {"cudaMemset", ApiKind::kMemset},
    {"cudaMemset2D", ApiKind::kMemset},
    {"cudaMemset3D", ApiKind::kMemset},
    {"cuMemsetD8", ApiKind::kMemset},
    {"cuMemsetD32", ApiKind::kMemset},
    {"cudaMemsetAsync", ApiKind::kMemsetAsync},
    {"cudaMemset2DAsync", ApiKind::kMemsetAsync},
    {"cudaMemset3DAsync", ApiKind::kMemsetAsync},
    {"cuMemsetD8Async", ApiKind::kMemsetAsync},
    {"cuMemsetD32Async", ApiKind::kMemsetAsync},
};

// Allocations and frees, of device, host and stream-ordered memory.
constexpr KindEntry kMemoryKinds[] = {
    {"cudaMalloc", ApiKind::kMalloc},
    {"cudaMallocPitch", ApiKind::kMalloc},
    {"cudaMallocManaged", ApiKind::kMalloc},
    {"cuMemAlloc", ApiKind::kMalloc},
    {"cuMemAllocPitch", ApiKind::kMalloc},
    {"cuMemAllocManaged", ApiKind::kMalloc},
    {"cuMemCreate", ApiKind::kMalloc},
    {"cudaFree", ApiKind::kFree},
    {"cuMemFree", ApiKind::kFree},
    {"cuMemRelease", ApiKind::kFree},
    {"cudaMallocHost", ApiKind::kHostAlloc},
    {"cudaHostAlloc", ApiKind::kHostAlloc},
    {"cudaHostRegister", ApiKind::kHostAlloc},
    {"cuMemAllocHost", ApiKind::kHostAlloc},
    {"cuMemHostAlloc", ApiKind::kHostAlloc},
    {"cuMemHostRegister", ApiKind::kHostAlloc},
    {"cudaFreeHost", ApiKind::kHostFree},
    {"cudaHostUnregister", ApiKind::kHostFree},
    {"cuMemFreeHost", ApiKind::kHostFree},
    {"cuMemHostUnregister", ApiKind::kHostFree},
    {"cudaMallocAsync", ApiKind::kMallocAsync},
    {"cudaMallocFromPoolAsync", ApiKind::kMallocAsync},
    {"cuMemAllocAsync", ApiKind::kMallocAsync},
    {"cuMemAllocFromPoolAsync", ApiKind::kMallocAsync},
    {"cudaFreeAsync", ApiKind::kFreeAsync},
    {"cuMemFreeAsync", ApiKind::kFreeAsync},
};

// Streams, events, graphs and lazy initialization (modules, contexts).
constexpr KindEntry kObjectKinds[] = {
    // Streams and events.
    {"cudaStreamCreate", ApiKind::kStreamCreate},
    {"cudaStreamCreateWithFlags", ApiKind::kStreamCreate},
    {"cudaStreamCreateWithPriority", ApiKind::kStreamCreate},
    {"cuStreamCreate", ApiKind::kStreamCreate},
    {"cuStreamCreateWithPriority", ApiKind::kStreamCreate},
    {"cudaStreamDestroy", ApiKind::kStreamDestroy},
    {"cuStreamDestroy", ApiKind::kStreamDestroy},
    {"cudaEventRecord", ApiKind::kEventRecord},
    {"cudaEventRecordWithFlags", ApiKind::kEventRecord},
    {"cuEventRecord", ApiKind::kEventRecord},
    {"cuEventRecordWithFlags", ApiKind::kEventRecord},
    {"cudaStreamWaitEvent", ApiKind::kStreamWaitEvent},
    {"cuStreamWaitEvent", ApiKind::kStreamWaitEvent},
    // Graphs.
    {"cudaGraphCreate", ApiKind::kGraphCreate},
    {"cuGraphCreate", ApiKind::kGraphCreate},
    {"cudaGraphInstantiate", ApiKind::kGraphInstantiate},
    {"cudaGraphInstantiateWithFlags", ApiKind::kGraphInstantiate},
    {"cudaGraphInstantiateWithParams", ApiKind::kGraphInstantiate},
    {"cuGraphInstantiate", ApiKind::kGraphInstantiate},
    {"cuGraphInstantiateWithFlags", ApiKind::kGraphInstantiate},
    {"cuGraphInstantiateWithParams", ApiKind::kGraphInstantiate},
    {"cudaGraphUpload", ApiKind::kGraphUpload},
    {"cuGraphUpload", ApiKind::kGraphUpload},
    {"cudaGraphLaunch", ApiKind::kGraphLaunch},
    {"cuGraphLaunch", ApiKind::kGraphLaunch},
    {"cudaGraphDestroy", ApiKind::kGraphDestroy},
    {"cuGraphDestroy", ApiKind::kGraphDestroy},
    {"cudaGraphExecDestroy", ApiKind::kGraphExecDestroy},
    {"cuGraphExecDestroy", ApiKind::kGraphExecDestroy},
    // Lazy initialization.
    {"cuModuleLoad", ApiKind::kModuleLoad},
    {"cuModuleLoadData", ApiKind::kModuleLoad},
    {"cuModuleLoadDataEx", ApiKind::kModuleLoad},
    {"cuModuleLoadFatBinary", ApiKind::kModuleLoad},
    {"cuLibraryLoadData", ApiKind::kModuleLoad},
    {"cuLibraryLoadFromFile", ApiKind::kModuleLoad},
    {"cuCtxCreate", ApiKind::kContextCreate},
    {"cuDevicePrimaryCtxRetain", ApiKind::kContextCreate},
};

// The families joined once, at the first lookup.
const absl::flat_hash_map<absl::string_view, ApiKind>& KindTable() {
  static const auto* const kTable = [] {
    auto* table = new absl::flat_hash_map<absl::string_view, ApiKind>;
    for (const absl::Span<const KindEntry> family :
         {absl::MakeConstSpan(kExecutionKinds), absl::MakeConstSpan(kTransferKinds), absl::MakeConstSpan(kMemoryKinds),
          absl::MakeConstSpan(kObjectKinds)}) {
      table->insert(family.begin(), family.end());
    }
    return table;
  }();
  return *kTable;
}

}  // namespace

std::string NormalizeApiName(absl::string_view cupti_name) {
  absl::string_view name = cupti_name;
  while (StripOneSuffix(&name)) {
  }
  return std::string(name);
}

std::optional<ApiKind> ApiKindForName(absl::string_view normalized_name) {
  const auto& table = KindTable();
  auto it = table.find(normalized_name);
  if (it == table.end()) return std::nullopt;
  return it->second;
}

bool IsSynchronizing(ApiKind kind) {
  switch (kind) {
    case ApiKind::kStreamSynchronize:
    case ApiKind::kDeviceSynchronize:
    case ApiKind::kEventSynchronize:
    case ApiKind::kMemcpy:
    case ApiKind::kMemset:
      return true;
    default:
      return false;
  }
}

bool IsGpuOperation(ApiKind kind) {
  switch (kind) {
    case ApiKind::kKernelLaunch:
    case ApiKind::kMemcpy:
    case ApiKind::kMemcpyAsync:
    case ApiKind::kMemset:
    case ApiKind::kMemsetAsync:
      return true;
    default:
      return false;
  }
}

}  // namespace graphcheck::trace
