// What a captured CUDA graph names of device memory (trace::GraphManifest), read from the graph itself when its
// capture ends, before the program instantiates and destroys it: each kernel node's arguments (the argument layout
// from cuFuncGetParamInfo / cuKernelGetParamInfo, every 8-byte word of each argument kept when it could be a device
// address, so that pointers inside structures passed by value count too), each copy node's source and destination
// and each set node's destination; child graphs are walked. The driver calls go through GraphDriver, the seam where
// tests feed a fake graph.
//
// Reading never fails and never stops the program: a node whose parameters cannot be read (an unknown kernel, a
// driver older than CUDA 12.4 without cuFuncGetParamInfo) is counted with the reason, and the manifest then says the
// graph's memory was not audited.
#ifndef GRAPHCHECK_CAPTURE_GRAPH_MANIFEST_H_
#define GRAPHCHECK_CAPTURE_GRAPH_MANIFEST_H_

#include <cuda.h>

#include <cstdint>
#include <functional>

#include "absl/strings/string_view.h"
#include "trace/graph_manifest.h"

namespace graphcheck::capture {

// The driver calls a manifest is read with.
struct GraphDriver {
  CUresult (*get_nodes)(CUgraph, CUgraphNode*, size_t*) = nullptr;
  CUresult (*node_type)(CUgraphNode, CUgraphNodeType*) = nullptr;
  CUresult (*kernel_params)(CUgraphNode, CUDA_KERNEL_NODE_PARAMS*) = nullptr;
  CUresult (*copy_params)(CUgraphNode, CUDA_MEMCPY3D*) = nullptr;
  CUresult (*set_params)(CUgraphNode, CUDA_MEMSET_NODE_PARAMS*) = nullptr;
  CUresult (*child_graph)(CUgraphNode, CUgraph*) = nullptr;
  // Since CUDA 12.4: null on an older driver (then no kernel's arguments can be read).
  CUresult (*function_param_info)(CUfunction, size_t, size_t*, size_t*) = nullptr;
  CUresult (*kernel_param_info)(CUkernel, size_t, size_t*, size_t*) = nullptr;
};

// The driver's own calls; the parameter-info calls are looked up at run time (cuGetProcAddress), so a driver without
// them loads the recorder all the same.
GraphDriver DriverGraphCalls();

// Whether an 8-byte word of a kernel argument could be a device address (on x86-64 and aarch64 Linux, CUDA's
// allocations lie between 4 GiB and 2^48): small integers, sizes, strides and flags are not.
bool CouldBeDeviceAddress(uint64_t word);

// Reads `graph`'s manifest (thread_id, time_ns and graph_id are the caller's to fill). `intern` turns the reason a
// node could not be read into a string id.
trace::GraphManifest ReadGraphManifest(CUgraph graph, const GraphDriver& driver,
                                       const std::function<trace::StringId(absl::string_view)>& intern);

}  // namespace graphcheck::capture

#endif  // GRAPHCHECK_CAPTURE_GRAPH_MANIFEST_H_
