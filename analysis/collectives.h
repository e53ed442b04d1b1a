// NCCL's calls as a trace holds them. NCCL wraps each of its API calls (ncclAllReduce, ncclBroadcast, ...) in an NVTX
// range of its own domain, "NCCL", which the recorder keeps like any range; the call's kernels follow on the stream
// it was given. Seen on an H100 with torch 2.11: DDP's gradient all-reduces come from the autograd thread
// (pt_autograd_0), a program's own torch.distributed calls from its thread, and a job of one rank still makes the
// calls (and launches no kernel for them).
#ifndef GRAPHCHECK_ANALYSIS_COLLECTIVES_H_
#define GRAPHCHECK_ANALYSIS_COLLECTIVES_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "analysis/nvtx_index.h"

namespace graphcheck::analysis {

// Consecutive calls of one NCCL function: "ncclAllReduce" x 12.
struct CollectiveRun {
  std::string name;
  uint32_t count = 0;
  bool operator==(const CollectiveRun& other) const { return name == other.name && count == other.count; }
  bool operator<(const CollectiveRun& other) const {
    return name != other.name ? name < other.name : count < other.count;
  }
};

// The NCCL calls among `nccl` (NvtxIndex::RangesInDomain("NCCL"), sorted by start) that began in [start_ns, end_ns],
// on any thread,
// in call order and run-length encoded.
std::vector<CollectiveRun> CollectivesBetween(const std::vector<DomainRange>& nccl, uint64_t start_ns, uint64_t end_ns);

// The same calls split by the communicator each used (DomainRange::communicator; 0: not named), each in call order.
std::map<uint64_t, std::vector<CollectiveRun>> CollectivesByCommunicator(const std::vector<DomainRange>& nccl,
                                                                         uint64_t start_ns, uint64_t end_ns);

// "communicator 5c1e04a2" (the first 8 hex digits of NCCL's commHash, enough to tell a job's communicators apart);
// "" for 0.
std::string CommunicatorText(uint64_t communicator);

// Whether a kernel is one of NCCL's device kernels: ncclDevKernel_AllReduce_Sum_f32_RING_LL (NCCL 2.19+),
// ncclKernel_... (earlier).
bool IsNcclKernel(absl::string_view kernel_name);

// "ncclAllReduce x12, ncclBroadcast"; "no NCCL call" for none.
std::string DescribeCollectives(const std::vector<CollectiveRun>& runs);

}  // namespace graphcheck::analysis

#endif  // GRAPHCHECK_ANALYSIS_COLLECTIVES_H_
