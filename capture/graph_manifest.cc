// Reads what a captured graph names of device memory from its nodes (graph_manifest.h).
#include "capture/graph_manifest.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"

namespace graphcheck::capture {
namespace {

using trace::GraphMemoryUse;

constexpr int kMaxChildDepth = 8;       // child graphs inside child graphs
constexpr size_t kMaxArguments = 4096;  // arguments asked for per kernel (CUDA allows 32764 bytes of them)
constexpr uint64_t kLowestAddress = uint64_t{1} << 32;
constexpr uint64_t kAddressLimit = uint64_t{1} << 48;

// An argument's place in the kernel's parameter buffer.
struct Argument {
  size_t offset = 0;
  size_t bytes = 0;
};

class ManifestReader {
 public:
  ManifestReader(const GraphDriver& driver, const std::function<trace::StringId(absl::string_view)>& intern)
      : driver_(driver), intern_(intern) {}

  void Graph(CUgraph graph, int depth) {
    size_t count = 0;
    if (const CUresult r = driver_.get_nodes(graph, nullptr, &count); r != CUDA_SUCCESS) {
      return Unread(absl::StrCat("cuGraphGetNodes returned ", r));
    }
    std::vector<CUgraphNode> nodes(count);
    if (count > 0) {
      if (const CUresult r = driver_.get_nodes(graph, nodes.data(), &count); r != CUDA_SUCCESS) {
        return Unread(absl::StrCat("cuGraphGetNodes returned ", r));
      }
      nodes.resize(count);
    }
    for (CUgraphNode node : nodes) Node(node, depth);
  }

  trace::GraphManifest Finish() && {
    std::sort(uses_.begin(), uses_.end(), [](const GraphMemoryUse& a, const GraphMemoryUse& b) {
      return a.address != b.address ? a.address < b.address : a.access < b.access;
    });
    uses_.erase(std::unique(uses_.begin(), uses_.end(),
                            [](const GraphMemoryUse& a, const GraphMemoryUse& b) {
                              return a.address == b.address && a.access == b.access;
                            }),
                uses_.end());
    if (uses_.size() > trace::kMaxGraphMemoryUses) {
      manifest_.uses_left_out = static_cast<uint32_t>(uses_.size() - trace::kMaxGraphMemoryUses);
      uses_.resize(trace::kMaxGraphMemoryUses);
    }
    manifest_.uses = std::move(uses_);
    return std::move(manifest_);
  }

 private:
  void Node(CUgraphNode node, int depth) {
    CUgraphNodeType type;
    if (const CUresult r = driver_.node_type(node, &type); r != CUDA_SUCCESS) {
      return Unread(absl::StrCat("cuGraphNodeGetType returned ", r));
    }
    switch (type) {
      case CU_GRAPH_NODE_TYPE_KERNEL:
        ++manifest_.kernel_nodes;
        return Kernel(node);
      case CU_GRAPH_NODE_TYPE_MEMCPY:
        ++manifest_.copy_nodes;
        return Copy(node);
      case CU_GRAPH_NODE_TYPE_MEMSET:
        ++manifest_.set_nodes;
        return Set(node);
      case CU_GRAPH_NODE_TYPE_GRAPH: {
        CUgraph child = nullptr;
        if (depth >= kMaxChildDepth) return Unread("child graphs nested too deep");
        if (const CUresult r = driver_.child_graph(node, &child); r != CUDA_SUCCESS) {
          return Unread(absl::StrCat("cuGraphChildGraphNodeGetGraph returned ", r));
        }
        return Graph(child, depth + 1);
      }
      case CU_GRAPH_NODE_TYPE_CONDITIONAL:
        ++manifest_.other_nodes;
        return Unread("a conditional node's body graphs are not read");
      default:
        ++manifest_.other_nodes;
        return;
    }
  }

  void Kernel(CUgraphNode node) {
    CUDA_KERNEL_NODE_PARAMS params;
    std::memset(&params, 0, sizeof(params));
    if (const CUresult r = driver_.kernel_params(node, &params); r != CUDA_SUCCESS) {
      return Unread(absl::StrCat("cuGraphKernelNodeGetParams returned ", r));
    }
    if (params.kernelParams == nullptr) {
      if (params.extra != nullptr) return PackedArguments(params.extra);
      return;  // a kernel without arguments
    }
    const std::vector<Argument>* arguments = Layout(params);
    if (arguments == nullptr) return;
    for (size_t i = 0; i < arguments->size(); ++i) {
      Words(static_cast<const unsigned char*>(params.kernelParams[i]), (*arguments)[i].bytes);
    }
  }

  // The arguments' layout, once per kernel; null (and the node counted as unread) when it cannot be had.
  const std::vector<Argument>* Layout(const CUDA_KERNEL_NODE_PARAMS& params) {
    const void* key = params.func != nullptr ? static_cast<const void*>(params.func) : params.kern;
    if (auto known = layouts_.find(key); known != layouts_.end()) {
      if (known->second.has_value()) return &*known->second;
      Unread(reasons_[key]);
      return nullptr;
    }
    std::vector<Argument> arguments;
    std::string reason;
    if (params.func == nullptr && params.kern == nullptr) {
      reason = "a kernel node names no function";
    } else if (params.func != nullptr ? driver_.function_param_info == nullptr : driver_.kernel_param_info == nullptr) {
      reason = params.func != nullptr ? "this driver has no cuFuncGetParamInfo (CUDA 12.4 or later)"
                                      : "this driver has no cuKernelGetParamInfo (CUDA 12.4 or later)";
    } else {
      for (size_t i = 0; i < kMaxArguments; ++i) {
        Argument argument;
        const CUresult r = params.func != nullptr
                               ? driver_.function_param_info(params.func, i, &argument.offset, &argument.bytes)
                               : driver_.kernel_param_info(params.kern, i, &argument.offset, &argument.bytes);
        if (r == CUDA_ERROR_INVALID_VALUE) break;  // past the last argument
        if (r != CUDA_SUCCESS) {
          reason =
              absl::StrCat(params.func != nullptr ? "cuFuncGetParamInfo" : "cuKernelGetParamInfo", " returned ", r);
          break;
        }
        arguments.push_back(argument);
      }
    }
    if (!reason.empty()) {
      layouts_[key] = std::nullopt;
      Unread(reason);
      reasons_[key] = std::move(reason);
      return nullptr;
    }
    return &*(layouts_[key] = std::move(arguments));
  }

  // Arguments passed as one packed buffer (CU_LAUNCH_PARAM_BUFFER_POINTER).
  void PackedArguments(void** extra) {
    const unsigned char* buffer = nullptr;
    size_t bytes = 0;
    for (size_t i = 0; i < 64 && extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
      if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER) buffer = static_cast<const unsigned char*>(extra[i + 1]);
      if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE && extra[i + 1] != nullptr) {
        bytes = *static_cast<const size_t*>(extra[i + 1]);
      }
    }
    if (buffer == nullptr) return Unread("a kernel node's extra arguments hold no buffer");
    Words(buffer, bytes);
  }

  // Every 8-byte word of an argument that could be a device address: pointers in a structure passed by value sit at
  // 8-byte offsets from its start.
  void Words(const unsigned char* value, size_t bytes) {
    if (value == nullptr) return;
    for (size_t offset = 0; offset + sizeof(uint64_t) <= bytes; offset += sizeof(uint64_t)) {
      uint64_t word;
      std::memcpy(&word, value + offset, sizeof(word));
      if (CouldBeDeviceAddress(word)) uses_.push_back({GraphMemoryUse::Access::kArgument, word, 0});
    }
  }

  void Copy(CUgraphNode node) {
    CUDA_MEMCPY3D copy;
    std::memset(&copy, 0, sizeof(copy));
    if (const CUresult r = driver_.copy_params(node, &copy); r != CUDA_SUCCESS) {
      return Unread(absl::StrCat("cuGraphMemcpyNodeGetParams returned ", r));
    }
    const uint64_t bytes =
        uint64_t{copy.WidthInBytes} * std::max<size_t>(copy.Height, 1) * std::max<size_t>(copy.Depth, 1);
    if (OnDevice(copy.srcMemoryType)) {
      uses_.push_back({GraphMemoryUse::Access::kCopyRead,
                       copy.srcDevice + copy.srcXInBytes + uint64_t{copy.srcY} * copy.srcPitch, bytes});
    }
    if (OnDevice(copy.dstMemoryType)) {
      uses_.push_back({GraphMemoryUse::Access::kCopyWrite,
                       copy.dstDevice + copy.dstXInBytes + uint64_t{copy.dstY} * copy.dstPitch, bytes});
    }
  }

  void Set(CUgraphNode node) {
    CUDA_MEMSET_NODE_PARAMS set;
    std::memset(&set, 0, sizeof(set));
    if (const CUresult r = driver_.set_params(node, &set); r != CUDA_SUCCESS) {
      return Unread(absl::StrCat("cuGraphMemsetNodeGetParams returned ", r));
    }
    const uint64_t row = uint64_t{set.elementSize} * set.width;
    const uint64_t bytes = set.height > 1 ? set.pitch * (set.height - 1) + row : row;
    uses_.push_back({GraphMemoryUse::Access::kSet, set.dst, bytes});
  }

  static bool OnDevice(CUmemorytype type) { return type == CU_MEMORYTYPE_DEVICE || type == CU_MEMORYTYPE_UNIFIED; }

  void Unread(absl::string_view reason) {
    ++manifest_.unread_nodes;
    if (manifest_.unread_reason == 0) manifest_.unread_reason = intern_(reason);
  }

  const GraphDriver& driver_;
  const std::function<trace::StringId(absl::string_view)>& intern_;
  trace::GraphManifest manifest_;
  std::vector<GraphMemoryUse> uses_;
  absl::flat_hash_map<const void*, std::optional<std::vector<Argument>>> layouts_;
  absl::flat_hash_map<const void*, std::string> reasons_;
};

}  // namespace

bool CouldBeDeviceAddress(uint64_t word) { return word >= kLowestAddress && word < kAddressLimit; }

trace::GraphManifest ReadGraphManifest(CUgraph graph, const GraphDriver& driver,
                                       const std::function<trace::StringId(absl::string_view)>& intern) {
  ManifestReader reader(driver, intern);
  reader.Graph(graph, 0);
  return std::move(reader).Finish();
}

}  // namespace graphcheck::capture
