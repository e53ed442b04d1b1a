// Each captured graph's contract, joined from the recorder's manifest, the probe's names, the allocator's history and
// the graph's launches (graph_contract.h).
#include "analysis/graph_contract.h"

#include <algorithm>
#include <map>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "analysis/nvtx_index.h"
#include "analysis/python_probe.h"
#include "core/plural.h"

namespace graphcheck::analysis {
namespace {

using trace::NamedTensor;

constexpr size_t kMaxBlocksBelow = 64;  // distinct block addresses looked at below an address
constexpr uint64_t kMaxBlockBytes = uint64_t{1} << 40;

// The caching allocator's blocks by address, each address's lives in time order.
class AllocatorBlocks {
 public:
  explicit AllocatorBlocks(const std::vector<trace::AllocatorEvent>& events) {
    absl::flat_hash_map<uint64_t, AllocatorBlock> open;
    for (const trace::AllocatorEvent& event : events) {
      if (event.action == trace::AllocatorEvent::Action::kAlloc) {
        open[event.address] = AllocatorBlock{event.address, event.bytes, event.time_ns, ~uint64_t{0}};
        continue;
      }
      auto it = open.find(event.address);
      AllocatorBlock block = it != open.end() ? it->second : AllocatorBlock{event.address, event.bytes, 0, 0};
      if (it != open.end()) open.erase(it);
      block.free_ns = event.time_ns;
      lives_[block.address].push_back(block);
    }
    for (const auto& [address, block] : open) lives_[address].push_back(block);
    for (auto& [address, lives] : lives_) {
      std::sort(lives.begin(), lives.end(),
                [](const AllocatorBlock& a, const AllocatorBlock& b) { return a.alloc_ns < b.alloc_ns; });
    }
  }

  // The block holding `address` at `time_ns`.
  std::optional<AllocatorBlock> At(uint64_t address, uint64_t time_ns) const {
    auto it = lives_.upper_bound(address);
    for (size_t looked = 0; it != lives_.begin() && looked < kMaxBlocksBelow; ++looked) {
      --it;
      const std::vector<AllocatorBlock>& lives = it->second;
      auto life = std::upper_bound(lives.begin(), lives.end(), time_ns,
                                   [](uint64_t t, const AllocatorBlock& b) { return t < b.alloc_ns; });
      if (life == lives.begin()) continue;
      --life;
      if (time_ns < life->free_ns && address < life->address + std::min(life->bytes, kMaxBlockBytes)) return *life;
    }
    return std::nullopt;
  }

  // The first block holding `address` that was allocated after `from_ns` and before `to_ns` and that `wanted` takes.
  template <typename Wanted>
  std::optional<AllocatorBlock> AllocatedBetween(uint64_t address, uint64_t from_ns, uint64_t to_ns,
                                                 Wanted wanted) const {
    std::optional<AllocatorBlock> first;
    auto it = lives_.upper_bound(address);
    for (size_t looked = 0; it != lives_.begin() && looked < kMaxBlocksBelow; ++looked) {
      --it;
      for (const AllocatorBlock& life : it->second) {
        if (life.alloc_ns <= from_ns || life.alloc_ns >= to_ns) continue;
        if (address >= life.address + std::min(life.bytes, kMaxBlockBytes) || !wanted(life)) continue;
        if (!first || life.alloc_ns < first->alloc_ns) first = life;
      }
    }
    return first;
  }

  // The blocks allocated after `from_ns` and before `to_ns` that were still allocated at `to_ns`.
  std::vector<AllocatorBlock> LeftAllocated(uint64_t from_ns, uint64_t to_ns) const {
    std::vector<AllocatorBlock> left;
    for (const auto& [address, lives] : lives_) {
      for (const AllocatorBlock& life : lives) {
        if (life.alloc_ns > from_ns && life.alloc_ns < to_ns && life.free_ns > to_ns) left.push_back(life);
      }
    }
    return left;
  }

 private:
  std::map<uint64_t, std::vector<AllocatorBlock>> lives_;
};

// Address ranges with what they are called, for lookups by address.
class NamedRanges {
 public:
  void Add(const NamedTensor* tensor) { ranges_.push_back(tensor); }
  void Sort() {
    std::sort(ranges_.begin(), ranges_.end(),
              [](const NamedTensor* a, const NamedTensor* b) { return a->address < b->address; });
  }
  const NamedTensor* Find(uint64_t address) const {
    auto it = std::upper_bound(ranges_.begin(), ranges_.end(), address,
                               [](uint64_t a, const NamedTensor* t) { return a < t->address; });
    // Tensors may overlap (a .grad and a view of it): look a few below.
    for (size_t looked = 0; it != ranges_.begin() && looked < 8; ++looked) {
      --it;
      if (address < (*it)->address + std::max<uint64_t>((*it)->bytes, 1)) return *it;
    }
    return nullptr;
  }

 private:
  std::vector<const NamedTensor*> ranges_;
};

// The probe's graph-tensors record of capture window `window`: the first after its capture-end for its graph, within
// the 64 events the probe sends right after it, and before that graph's next capture-end.
const trace::GraphTensors* TensorsRecord(const TraceAnalysis& analysis, size_t window) {
  const trace::CaptureEnd* end = analysis.probe().End(window);
  if (end == nullptr) return nullptr;
  const trace::ProbeRecords& records = analysis.probe().records();
  size_t next_end = ~size_t{0};
  for (const trace::CaptureEnd& later : records.capture_ends) {
    if (later.at.event > end->at.event && later.graph == end->graph) {
      next_end = later.at.event;
      break;
    }
  }
  for (const trace::GraphTensors& tensors : records.graph_tensors) {
    if (tensors.at.event <= end->at.event || tensors.graph != end->graph) continue;
    return tensors.at.event < end->at.event + 64 && tensors.at.event < next_end ? &tensors : nullptr;
  }
  return nullptr;
}

// Every pool segment any graph's probe record names: memory of graphs, never the program's own.
std::vector<NamedTensor> PoolSegments(const trace::ProbeRecords& records) {
  std::vector<NamedTensor> pools;
  for (const trace::GraphTensors& graph : records.graph_tensors) {
    for (NamedTensor& tensor : trace::ParseNamedTensors(graph.tensors)) {
      if (tensor.role == "pool") pools.push_back(std::move(tensor));
    }
  }
  return pools;
}

// The first launch of graph `graph_id` that starts after `time_ns`.
std::optional<size_t> LaunchAfter(const trace::Trace& trace, uint32_t graph_id, uint64_t time_ns) {
  auto first = std::upper_bound(trace.api_calls.begin(), trace.api_calls.end(), time_ns,
                                [](uint64_t t, const trace::ApiCall& c) { return t < c.start_ns; });
  for (auto it = first; it != trace.api_calls.end(); ++it) {
    if (it->kind == trace::ApiKind::kGraphLaunch && trace.Detail(*it).graph_id == graph_id) {
      return static_cast<size_t>(it - trace.api_calls.begin());
    }
  }
  return std::nullopt;
}

bool InAnyCapture(const std::vector<TimeInterval>& captures, uint64_t time_ns) {
  return std::any_of(captures.begin(), captures.end(), [&](const TimeInterval& capture) {
    return time_ns >= capture.start_ns && time_ns <= capture.end_ns;
  });
}

// A block the graph's capture allocated and left allocated (an output; `end_ns` the capture's end), freed after it,
// whose memory a later capture then took and still holds at a launch of the graph after that: the launch writes over
// the later capture's live block. One graph per bucket in a shared pool whose program kept only the last bucket's
// output. A later capture's scratch, freed by the launch, is the pool's sharing working as meant.
std::optional<FreedUse> OutputRetaken(const trace::Trace& trace, const AllocatorBlocks& blocks,
                                      const std::vector<TimeInterval>& captures, uint64_t address, uint64_t end_ns,
                                      uint32_t graph_id) {
  const std::optional<AllocatorBlock> output = blocks.At(address, end_ns);
  if (!output || output->free_ns == ~uint64_t{0} || !InAnyCapture(captures, output->alloc_ns)) return std::nullopt;
  for (const TimeInterval& capture : captures) {
    if (capture.start_ns < output->free_ns) continue;
    const std::optional<size_t> launch = LaunchAfter(trace, graph_id, capture.end_ns);
    if (!launch) break;
    const uint64_t launch_ns = trace.api_calls[*launch].start_ns;
    const bool taken = blocks
                           .AllocatedBetween(address, output->free_ns, launch_ns,
                                             [&](const AllocatorBlock& b) {
                                               return InAnyCapture(captures, b.alloc_ns) && b.free_ns > launch_ns;
                                             })
                           .has_value();
    if (taken) return FreedUse{*output, address, *launch, FreedUse::Kind::kOutputRetaken};
  }
  return std::nullopt;
}

// Whether another graph's manifest, read while `block` was allocated, names memory inside it: the block is that
// graph's input (a chain of graphs), whose freeing graph-reads-freed reports there.
bool NamedByAnotherGraph(const trace::Trace& trace, const AllocatorBlock& block, uint32_t graph_id) {
  for (const trace::GraphManifest& manifest : trace.graph_manifests) {
    if (manifest.graph_id == graph_id || manifest.time_ns <= block.alloc_ns || manifest.time_ns >= block.free_ns) {
      continue;
    }
    auto use = std::lower_bound(manifest.uses.begin(), manifest.uses.end(), block.address,
                                [](const trace::GraphMemoryUse& u, uint64_t a) { return u.address < a; });
    if (use != manifest.uses.end() && use->address < block.address + std::min(block.bytes, kMaxBlockBytes)) {
      return true;
    }
  }
  return false;
}

// A capture that wrote only memory it allocated (the probe's trace::CaptureWrites) and whose every block left
// allocated at its end (its outputs) the program freed: the first launch after the last of them was freed computes
// a result no tensor holds. One graph per bucket in a shared pool, of which the program kept only one bucket's output.
std::optional<FreedUse> OutputsDropped(const trace::Trace& trace, const AllocatorBlocks& blocks,
                                       const TimeInterval& capture, uint32_t graph_id) {
  const std::vector<AllocatorBlock> outputs = blocks.LeftAllocated(capture.start_ns, capture.end_ns);
  if (outputs.empty()) return std::nullopt;
  const AllocatorBlock* last = &outputs.front();
  for (const AllocatorBlock& output : outputs) {
    if (output.free_ns == ~uint64_t{0} || NamedByAnotherGraph(trace, output, graph_id)) return std::nullopt;
    if (output.free_ns > last->free_ns) last = &output;
  }
  const std::optional<size_t> launch = LaunchAfter(trace, graph_id, last->free_ns);
  if (!launch) return std::nullopt;
  return FreedUse{*last, last->address, *launch, FreedUse::Kind::kOutputsDropped, outputs.size()};
}

// The graph's names by role, its pool addresses, and the program's blocks it names that the probe did not name,
// with those freed while it was still launched. `captures`: every capture's host span. What any capture allocated is
// a graph's pool memory, whichever graph reads it (make_graphed_callables' backward graph reads what its forward
// capture saved, and autograd frees those blocks in the pool they share), also where the probe listed no segments;
// only the program's own captures' outputs are followed into a later capture (libraries keep theirs). Unsorted.
void ResolveUses(const trace::Trace& trace, const AllocatorBlocks& blocks, const NamedRanges& pools,
                 const std::vector<NamedTensor>& named, const std::vector<TimeInterval>& captures, uint64_t end_ns,
                 GraphContract* contract) {
  NamedRanges names;
  for (const NamedTensor& tensor : named) {
    if (tensor.role != "pool") names.Add(&tensor);
  }
  names.Sort();
  absl::flat_hash_set<const NamedTensor*> seen_named;
  absl::flat_hash_set<uint64_t> seen_blocks;
  const bool library_managed = contract->origin == trace::ProbeOrigin::kCudagraphTrees ||
                               contract->origin == trace::ProbeOrigin::kCudagraphTreesInit;
  absl::flat_hash_set<uint64_t> seen_outputs;
  for (const trace::GraphMemoryUse& use : contract->manifest->uses) {
    if (contract->origin == trace::ProbeOrigin::kUser) {
      const std::optional<FreedUse> retaken =
          OutputRetaken(trace, blocks, captures, use.address, end_ns, contract->graph_id);
      if (retaken && seen_outputs.insert(retaken->block.address).second) contract->freed.push_back(*retaken);
    }
    if (const NamedTensor* tensor = names.Find(use.address)) {
      if (!seen_named.insert(tensor).second) continue;
      auto role = std::find_if(contract->named.begin(), contract->named.end(),
                               [&](const GraphRoleUse& r) { return r.role == tensor->role; });
      if (role == contract->named.end()) role = contract->named.insert(role, GraphRoleUse{tensor->role, 0, 0});
      ++role->tensors;
      role->bytes += tensor->bytes;
      continue;
    }
    if (pools.Find(use.address) != nullptr) {
      ++contract->pool_addresses;
      continue;
    }
    const std::optional<AllocatorBlock> block = blocks.At(use.address, end_ns);
    if (!block || InAnyCapture(captures, block->alloc_ns)) continue;
    if (!seen_blocks.insert(block->address).second) continue;
    ++contract->program_blocks;
    if (block->free_ns == ~uint64_t{0} || library_managed) continue;
    if (const std::optional<size_t> replay = LaunchAfter(trace, contract->graph_id, block->free_ns)) {
      contract->freed.push_back(FreedUse{*block, use.address, *replay});
    }
  }
}

std::string BytesText(uint64_t bytes) {
  if (bytes < 1024) return Plural(bytes, "byte", "bytes");
  if (bytes < (uint64_t{1} << 20)) return absl::StrFormat("%.0f KiB", bytes / 1024.0);
  return bytes < (uint64_t{10} << 20) ? absl::StrFormat("%.1f MiB", bytes / 1048576.0)
                                      : absl::StrFormat("%.0f MiB", bytes / 1048576.0);
}

// "3 parameters", "12 optimizer state tensors": a role of trace::NamedTensor counted.
std::string RoleCount(uint64_t n, absl::string_view role) {
  if (role == "grad") return Plural(n, "gradient", "gradients");
  if (role == "optimizer-state") return Plural(n, "optimizer state tensor", "optimizer state tensors");
  if (role == "static-input" || role == "static-output") {
    return Plural(n, absl::StrCat(role == "static-input" ? "static input" : "static output"),
                  absl::StrCat(role == "static-input" ? "static inputs" : "static outputs"));
  }
  return Plural(n, role, absl::StrCat(role, "s"));
}

}  // namespace

std::vector<GraphContract> ReadGraphContracts(const TraceAnalysis& analysis) {
  const trace::Trace& trace = analysis.trace();
  absl::flat_hash_map<uint32_t, const trace::GraphManifest*> manifests;
  for (const trace::GraphManifest& manifest : trace.graph_manifests) manifests.emplace(manifest.graph_id, &manifest);
  const AllocatorBlocks blocks(trace.allocations);
  const std::vector<NamedTensor> pool_segments = PoolSegments(analysis.probe().records());
  NamedRanges pools;
  for (const NamedTensor& segment : pool_segments) pools.Add(&segment);
  pools.Sort();

  std::vector<GraphContract> contracts;
  const std::vector<CaptureWindow>& windows = analysis.captures().windows();
  std::vector<TimeInterval> captures;
  for (const CaptureWindow& window : windows) {
    if (window.end_call) {
      captures.push_back({trace.api_calls[window.begin_call].start_ns, trace.api_calls[*window.end_call].start_ns});
    }
  }
  for (size_t w = 0; w < windows.size(); ++w) {
    if (!windows[w].end_call) continue;
    const trace::ApiCall& end = trace.api_calls[*windows[w].end_call];
    GraphContract contract;
    contract.window = w;
    contract.graph_id = static_cast<uint32_t>(trace.Detail(end).graph_id);
    if (contract.graph_id == 0) continue;  // the capture made no graph
    contract.origin = analysis.probe().Origin(w);
    auto manifest = manifests.find(contract.graph_id);
    if (manifest != manifests.end()) contract.manifest = manifest->second;
    contract.tensors = TensorsRecord(analysis, w);
    const std::vector<NamedTensor> named =
        contract.tensors != nullptr ? trace::ParseNamedTensors(contract.tensors->tensors) : std::vector<NamedTensor>{};
    if (contract.manifest != nullptr) {
      // The graph is whole when its capture end is called.
      ResolveUses(trace, blocks, pools, named, captures, end.start_ns, &contract);
    }
    if (contract.tensors != nullptr && contract.tensors->writes == trace::CaptureWrites::kOwnMemory) {
      const TimeInterval capture{trace.api_calls[windows[w].begin_call].start_ns, end.start_ns};
      if (std::optional<FreedUse> dropped = OutputsDropped(trace, blocks, capture, contract.graph_id)) {
        contract.freed.push_back(*dropped);
      }
    }
    std::sort(contract.freed.begin(), contract.freed.end(),
              [](const FreedUse& a, const FreedUse& b) { return a.block.free_ns < b.block.free_ns; });
    contracts.push_back(std::move(contract));
  }
  return contracts;
}

std::vector<std::optional<bool>> LaunchesWriteInto(const TraceAnalysis& analysis,
                                                   const std::vector<ReadAcrossLaunch>& reads) {
  const trace::Trace& trace = analysis.trace();
  const AllocatorBlocks blocks(trace.allocations);
  std::vector<std::optional<bool>> writes;
  for (const ReadAcrossLaunch& read : reads) {
    writes.push_back(std::nullopt);
    if (read.earlier == nullptr || read.earlier->manifest == nullptr) continue;
    const CaptureWindow& window = analysis.captures().windows()[read.earlier->window];
    const std::optional<AllocatorBlock> held = blocks.At(read.address, read.time_ns);
    if (!window.end_call || !held) continue;
    const uint64_t held_end = held->address + std::min(held->bytes, kMaxBlockBytes);
    const uint64_t begin_ns = trace.api_calls[window.begin_call].start_ns;
    const uint64_t end_ns = trace.api_calls[*window.end_call].start_ns;
    writes.back() = std::any_of(
        read.earlier->manifest->uses.begin(), read.earlier->manifest->uses.end(),
        [&](const trace::GraphMemoryUse& use) {
          const std::optional<AllocatorBlock> own =
              blocks.AllocatedBetween(use.address, begin_ns, end_ns, [](const AllocatorBlock&) { return true; });
          return own && own->address < held_end && held->address < own->address + std::min(own->bytes, kMaxBlockBytes);
        });
  }
  return writes;
}

std::string CaptureSite(const TraceAnalysis& analysis, const GraphContract& contract) {
  const trace::Trace& trace = analysis.trace();
  if (const trace::CaptureBegin* begin = analysis.probe().Begin(contract.window)) {
    const std::string site = trace::CapturedAt(trace, begin->graph);
    if (!site.empty()) return site;
  }
  const std::string site =
      trace::ProgramSite(analysis.Locate(*analysis.captures().windows()[contract.window].end_call).python);
  return site.empty() ? "" : absl::StrCat(" (captured at ", site, ")");
}

std::string DescribeContract(const trace::Trace& trace, const GraphContract& contract) {
  if (contract.manifest == nullptr) return "no manifest recorded (a trace before format 1.10)";
  const trace::GraphManifest& manifest = *contract.manifest;
  std::vector<std::string> parts;
  for (const GraphRoleUse& role : contract.named) {
    parts.push_back(absl::StrCat(RoleCount(role.tensors, role.role), " (", BytesText(role.bytes), ")"));
  }
  if (contract.program_blocks > 0) {
    parts.push_back(
        Plural(contract.program_blocks, "other block of the program's memory", "other blocks of the program's memory"));
  }
  std::string text =
      absl::StrCat(Plural(manifest.kernel_nodes, "kernel", "kernels"), ", ",
                   Plural(manifest.copy_nodes, "copy", "copies"), ", ", Plural(manifest.set_nodes, "set", "sets"),
                   "; names ", parts.empty() ? std::string("nothing the program named") : absl::StrJoin(parts, ", "));
  if (contract.pool_addresses > 0) {
    absl::StrAppend(&text, "; ", Plural(contract.pool_addresses, "address", "addresses"), " in graph pools");
  }
  if (contract.tensors != nullptr) {
    absl::StrAppend(&text, "; bakes in ", Plural(contract.tensors->host_values, "host value", "host values"),
                    " the probe watches, from ", Plural(contract.tensors->modules, "module", "modules"));
  }
  if (!manifest.Audited()) {
    absl::StrAppend(&text, "; not audited: ",
                    manifest.unread_nodes > 0
                        ? absl::StrCat(Plural(manifest.unread_nodes, "node", "nodes"), " unread (",
                                       trace.String(manifest.unread_reason), ")")
                        : absl::StrCat(Plural(manifest.uses_left_out, "address", "addresses"), " left out"));
  }
  return text;
}

}  // namespace graphcheck::analysis
