// CUDA API names -> what the call does. CUPTI names callbacks by function and version ("cudaLaunchKernel_v7000",
// "cudaMemcpyAsync_ptsz_v7000", "cuMemAlloc_v2"); the recorder normalizes them and asks this table which calls to
// subscribe to and how to classify them. Pure strings, so it is tested without a GPU.
#ifndef GRAPHCHECK_TRACE_API_NAMES_H_
#define GRAPHCHECK_TRACE_API_NAMES_H_

#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "trace/events.h"

namespace graphcheck::trace {

// Strips CUPTI's version and per-thread-stream suffixes: "cudaMemcpyAsync_ptsz_v7000" -> "cudaMemcpyAsync",
// "cuMemAlloc_v2" -> "cuMemAlloc", "cuStreamGetCaptureInfo_v3" -> "cuStreamGetCaptureInfo".
std::string NormalizeApiName(absl::string_view cupti_name);

// The kind of a normalized API name, or nullopt for calls the recorder does not subscribe to.
std::optional<ApiKind> ApiKindForName(absl::string_view normalized_name);

// True for calls that wait for the GPU or for other host threads' work (the ones capture forbids and eager regions
// should avoid).
bool IsSynchronizing(ApiKind kind);

// True for the calls that put work on the GPU one by one: kernel launches, copies and memsets, the nodes a graph of
// them would hold.
bool IsGpuOperation(ApiKind kind);

}  // namespace graphcheck::trace

#endif  // GRAPHCHECK_TRACE_API_NAMES_H_
