// Each captured graph's contract as the trace shows it (format 1.10): the recorder's manifest of the device memory
// its nodes name (trace::GraphManifest), joined with what the Python probe named for it (its modules' parameters and
// buffers, gradients, optimizer state, its pool's segments: trace::NamedTensor), with the program's memory from the
// caching allocator's history, and with the graph's replays. Shared by graph-contract (what each graph holds) and
// graph-reads-freed (memory it names that was freed while it was still replayed).
#ifndef GRAPHCHECK_ANALYSIS_GRAPH_CONTRACT_H_
#define GRAPHCHECK_ANALYSIS_GRAPH_CONTRACT_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/trace_analysis.h"
#include "trace/events.h"
#include "trace/probe_records.h"

namespace graphcheck::analysis {

// The tensors of one role ("parameter", "grad", ...) a graph names.
struct GraphRoleUse {
  std::string role;
  uint64_t tensors = 0;
  uint64_t bytes = 0;
};

// One block of the caching allocator's, from its allocation to its free.
struct AllocatorBlock {
  uint64_t address = 0;
  uint64_t bytes = 0;
  uint64_t alloc_ns = 0;            // 0: before the allocator's history begins
  uint64_t free_ns = ~uint64_t{0};  // never freed in the trace
};

// Memory a graph names that the program freed while the graph was still replayed.
struct FreedUse {
  enum class Kind : uint8_t {
    kProgramBlock,  // a block the program allocated before the capture: the launch reads and writes freed memory
    // The graph's own output (its capture allocated it and left it allocated), and a later capture took the memory
    // before `replay_call` and still holds it then: that launch writes over the later graph's live tensor.
    kOutputRetaken,
    // Every block the capture left allocated (its outputs) was freed before `replay_call`, and the capture wrote no
    // memory the program held before it (the probe's trace::CaptureWrites): the launch's result is in no tensor the
    // program holds. `block` is the last of them freed.
    kOutputsDropped,
  };
  AllocatorBlock block;
  uint64_t address = 0;    // the address the graph names inside it
  size_t replay_call = 0;  // the first launch of the graph after the free (index into Trace::api_calls)
  Kind kind = Kind::kProgramBlock;
  size_t outputs = 0;  // kOutputsDropped: the blocks the capture left allocated
};

struct GraphContract {
  size_t window = 0;      // the capture window (CaptureAnalysis::windows)
  uint32_t graph_id = 0;  // CUPTI's id of the graph
  trace::ProbeOrigin origin = trace::ProbeOrigin::kUnknown;
  const trace::GraphManifest* manifest = nullptr;  // null: the recorder wrote none (traces before 1.10)
  const trace::GraphTensors* tensors = nullptr;    // the probe's graph-tensors record; null without the probe
  std::vector<GraphRoleUse> named;                 // roles the graph names, in the probe's order
  uint64_t pool_addresses = 0;  // addresses inside the graph's pool (its outputs, temporaries, static gradients)
  uint64_t program_blocks = 0;  // blocks of the program's memory it names that the probe has no name for
  std::vector<FreedUse> freed;  // by free time
};

// Every capture that made a graph, in capture order.
std::vector<GraphContract> ReadGraphContracts(const TraceAnalysis& analysis);

// Memory at `address`, read at `time_ns` across a launch of `earlier`'s graph (a later capture's output).
struct ReadAcrossLaunch {
  const GraphContract* earlier = nullptr;  // null: that capture is not in the trace
  uint64_t address = 0;
  uint64_t time_ns = 0;
};

// For each read, whether a launch of its earlier graph writes into that memory, as the allocator had it then: the
// graph's manifest names memory inside a block its capture allocated that overlaps the block holding the address (a
// temporary the capture let go at its end, which a later capture into the same pool took for its output). nullopt:
// not known (no capture, no manifest, or no block of the allocator's history holds the address then). The allocator's
// history is read once for all the reads.
std::vector<std::optional<bool>> LaunchesWriteInto(const TraceAnalysis& analysis,
                                                   const std::vector<ReadAcrossLaunch>& reads);

// " (captured at train.py:12 in step)": the capture's site, from the probe's capture-begin event or the capture end's
// own Python stack; "" when neither has a frame of the program's.
std::string CaptureSite(const TraceAnalysis& analysis, const GraphContract& contract);

// What a graph holds, for one line of the report: "names 48 parameters (412 MiB), 48 grads (412 MiB), 1 block of the
// program's memory; its pool 12 addresses; bakes in 3 host values (the probe watches them)".
std::string DescribeContract(const trace::Trace& trace, const GraphContract& contract);

}  // namespace graphcheck::analysis

#endif  // GRAPHCHECK_ANALYSIS_GRAPH_CONTRACT_H_
