// Which capture-time call made the graph node a replayed kernel ran, so that the kernel can be shown with the line,
// operator and NVTX range of its capture (issue 47: trace analysers name replayed kernels with no capture context).
//
// A replayed kernel's record names the graph it ran in (the instantiated copy's id, not the captured graph's), its
// node, and its launch by correlation id (the launch call names the captured graph). Seen on an H200
// (examples/traces/graphed_training): captured graph 1 ran as graph 2, whose node ids are 2 in the high 32 bits and the
// node's creation index in the low ones (0x200000000 + 0..28 for a capture of 28 kernel launches and a memset, in
// launch order), so ordering a graph's node ids orders its nodes as they were captured. A capture makes one kernel node
// per kernel launch, in call order. The join pairs them per kernel name: the k-th smallest node id of a name that an
// instantiated graph ran with the k-th launch of that name in its capture. A name whose counts differ (a node the
// records lost, a launch the recorder did not see) is left unattributed rather than guessed. Which captured graph an
// instantiated one copies is read from its first kernel record: later replays past a launch-recording window carry
// the correlation id of the last recorded launch, whichever graph that was (trace/events.h, DeriveGraphLaunches).
#ifndef GRAPHCHECK_TRACE_CAPTURED_NODES_H_
#define GRAPHCHECK_TRACE_CAPTURED_NODES_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "trace/events.h"

namespace graphcheck::trace {

// Each successful capture's kernel launches (indices into trace.api_calls, in call order), by the id of the graph its
// end made: what each captured graph holds.
absl::flat_hash_map<uint32_t, std::vector<size_t>> KernelLaunchesByGraph(const Trace& trace);

class CapturedNodes {
 public:
  explicit CapturedNodes(const Trace& trace);

  // The index into trace.api_calls of the capture-time launch of the node `kernel` ran; none when it is not a replayed
  // kernel or its node's launch is unknown.
  std::optional<size_t> LaunchOf(const KernelActivity& kernel) const;

  size_t attributed_nodes() const { return launch_of_node_.size(); }

 private:
  const Trace& trace_;
  // (instantiated graph id, node id) -> capture-time launch call
  absl::flat_hash_map<std::pair<uint32_t, uint64_t>, size_t> launch_of_node_;
};

}  // namespace graphcheck::trace

#endif  // GRAPHCHECK_TRACE_CAPTURED_NODES_H_
