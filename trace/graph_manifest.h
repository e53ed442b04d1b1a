// The capture contract's records (since format 1.10): what a captured CUDA graph uses. A graph reads and writes fixed
// device addresses and replays host values as they were at capture; what it holds of each is known when its capture
// ends and checked at its replays.
//
// - GraphManifest, the device side: every device address the graph's nodes name (kernel arguments, copies, sets), read
//   from the graph itself by the recorder when the capture ends (capture/graph_manifest.h).
// - NamedTensor, the host side: what the Python probe knows the program calls these addresses (a module's parameter
//   or buffer, a parameter's .grad, optimizer state, the graph's own pool), sent with its capture-end event
//   (ProbeEventKind::kGraphTensors, python/probe/graphcheck_probe/contract.py).
//
// The analysis joins the two (analysis/graph_contract.h).
#ifndef GRAPHCHECK_TRACE_GRAPH_MANIFEST_H_
#define GRAPHCHECK_TRACE_GRAPH_MANIFEST_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace graphcheck::trace {

using StringId = uint32_t;  // as in events.h

// One device address a graph's nodes name.
struct GraphMemoryUse {
  enum class Access : uint8_t {
    kArgument = 0,   // a kernel argument (or a word of a structure passed by value) holding the address
    kCopyRead = 1,   // a memcpy node's source
    kCopyWrite = 2,  // a memcpy node's destination
    kSet = 3,        // a memset node's destination
  };
  Access access = Access::kArgument;
  uint64_t address = 0;
  uint64_t bytes = 0;  // copies and sets; 0 for a kernel argument, whose extent only the kernel knows

  bool operator==(const GraphMemoryUse& o) const {
    return access == o.access && address == o.address && bytes == o.bytes;
  }
};
inline constexpr uint8_t kMaxGraphMemoryAccess = 3;
absl::string_view GraphMemoryAccessName(GraphMemoryUse::Access access);  // "argument", "copy-read", ...

// The uses a manifest keeps at most; the rest are counted as left out.
inline constexpr size_t kMaxGraphMemoryUses = 1 << 16;

// Device memory a captured graph names, read from its nodes when its capture ended. A kernel's arguments are words:
// each 8-byte word that could be a device address is kept (the analysis keeps only those inside memory the program
// allocated), so a pointer inside a structure passed by value (PyTorch's TensorIterator arguments) is found too.
struct GraphManifest {
  uint32_t thread_id = 0;
  uint64_t time_ns = 0;
  uint32_t graph_id = 0;  // CUPTI's id of the graph (as the capture end's call record names it)
  uint32_t kernel_nodes = 0;
  uint32_t copy_nodes = 0;
  uint32_t set_nodes = 0;
  uint32_t other_nodes = 0;  // host, event, memory-allocation, conditional, ... nodes: nothing read
  // Kernel nodes whose arguments could not be read, and why (the first reason seen): the manifest is partial, and
  // what the graph uses of memory is not audited.
  uint32_t unread_nodes = 0;
  StringId unread_reason = 0;
  uint32_t uses_left_out = 0;        // beyond kMaxGraphMemoryUses
  uint64_t read_ns = 0;              // host time the recorder took to read it (the manifest's cost per capture)
  std::vector<GraphMemoryUse> uses;  // by address, distinct (address, access)

  bool Audited() const { return unread_nodes == 0 && uses_left_out == 0; }
};

// A tensor the probe named for a graph when its capture ended: what the program calls memory the graph may use.
struct NamedTensor {
  // "parameter", "buffer", "grad", "optimizer-state", "static-input", "static-output", or "pool" (a segment of the
  // graph's private memory pool: what its capture allocated).
  std::string role;
  std::string name;  // "model.fc1.weight", "Adam exp_avg of model.fc1.weight"; "" for pool segments
  uint64_t address = 0;
  uint64_t bytes = 0;

  bool operator==(const NamedTensor& o) const {
    return role == o.role && name == o.name && address == o.address && bytes == o.bytes;
  }
};

// The probe's list as it travels in a kGraphTensors event's text: one tensor per line, "role\tname\taddress\tbytes"
// with the numbers in hexadecimal. Lines that do not parse are skipped; at most `limit` tensors are returned.
std::vector<NamedTensor> ParseNamedTensors(absl::string_view text, size_t limit = 1 << 16);

}  // namespace graphcheck::trace

#endif  // GRAPHCHECK_TRACE_GRAPH_MANIFEST_H_
