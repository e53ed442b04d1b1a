// graph-reads-freed: memory a captured graph reads or writes was freed while the graph was still replayed. A graph
// names fixed addresses; once the caching allocator has the memory back, the next replay reads whatever tensor the
// allocator put there since, and writes over it. Two ways to know:
// - the Python probe: a parameter or buffer of a module whose forward ran inside the capture lives elsewhere now and
//   the memory it had at capture is gone (`self.buf = torch.cat([self.buf, x])`); the line that dropped the last
//   reference is where the finding points when the probe saw it;
// - the recorder's manifest of the graph's nodes against the caching allocator's history: a block the program
//   allocated before the capture, named by the graph, freed afterwards, and a launch of the graph after the free;
//   or the graph's own output, let go after its capture and taken by a later capture in the same pool, then the
//   graph launched (one graph per bucket in a shared pool, the program keeping only the last bucket's output); or
//   every block the capture left allocated let go, by a capture that wrote nothing else (the probe's
//   trace::CaptureWrites), then the graph launched: its result lands in no tensor the program holds.
#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "analysis/graph_contract.h"
#include "analysis/memory_forecast.h"
#include "analysis/python_probe.h"
#include "analysis/trace_analysis.h"
#include "checks/checks.h"
#include "core/check_ids.h"
#include "core/plural.h"

namespace graphcheck::checks {

using analysis::CaptureSite;
using analysis::FreedUse;
using analysis::GraphContract;
using analysis::MibText;
using analysis::ProbeEventLocation;
using analysis::ReadGraphContracts;
using analysis::TraceAnalysis;

namespace {

using trace::StateRebound;
using trace::TensorRole;

constexpr char kOutputFix[] =
    "Keep every graph's static outputs alive for as long as the graph is replayed (one entry per graph, as its "
    "static inputs are kept) and read each graph's own output after its replay, or give each graph its own pool.";

constexpr char kFix[] =
    "Keep every tensor a graph reads alive, at the address it had at capture, for as long as the graph is replayed: "
    "update it in place (buf.copy_(new), a preallocated buffer of the largest size and a length) instead of "
    "assigning a new tensor, or capture the graph again after the change (and drop the old graph).";

// Where launch `call` of graph `graph_id`, or a later launch of it, ran in the program: the recorder takes the Python
// stack of a launch only when it goes back to an earlier graph than the thread's last (capture/recorder.cc), so the
// first launch after a free may have none. Empty when none of the next launches of the graph has one.
Location LaunchSite(const TraceAnalysis& analysis, uint32_t graph_id, size_t call) {
  constexpr size_t kMaxLaunchesLooked = 64;
  const std::vector<trace::ApiCall>& calls = analysis.trace().api_calls;
  size_t looked = 0;
  for (size_t c = call; c < calls.size() && looked < kMaxLaunchesLooked; ++c) {
    if (calls[c].kind != trace::ApiKind::kGraphLaunch || analysis.trace().Detail(calls[c]).graph_id != graph_id) {
      continue;
    }
    ++looked;
    Location where = analysis.Locate(c);
    if (FirstUserFrame(where) != nullptr) return where;
  }
  return Location{};
}

// "out, hidden": the static outputs the probe named for the graph at its capture's end.
std::string StaticOutputNames(const GraphContract& contract) {
  if (contract.tensors == nullptr) return "";
  std::vector<std::string> names;
  for (const trace::NamedTensor& tensor : trace::ParseNamedTensors(contract.tensors->tensors)) {
    if (tensor.role == "static-output" && names.size() < 8) names.push_back(tensor.name);
  }
  return absl::StrJoin(names, ", ");
}

class GraphReadsFreedCheck : public CheckOf<TraceAnalysis> {
 public:
  GraphReadsFreedCheck()
      : CheckOf(CheckInfo{check_id::kGraphReadsFreed,
                          "A captured graph reads memory that was freed",
                          Severity::kError,
                          CheckArea::kState,
                          "Memory a captured graph reads or writes at a fixed address was freed while the graph was "
                          "still replayed: each replay reads whatever the allocator put there since and writes over "
                          "it.",
                          {}}) {}

 protected:
  void Read(const TraceAnalysis& analysis, const BoundOptions&, std::vector<Finding>* findings) const override {
    const trace::Trace& trace = analysis.trace();
    std::multimap<uint64_t, uint64_t> named;  // Python graph -> address of a tensor the probe reported freed
    // One finding per graph and role: a checkpoint loaded with load_state_dict() frees every optimizer state tensor.
    std::map<std::pair<uint64_t, absl::string_view>, std::vector<const StateRebound*>> freed;  // by graph, role name
    const trace::ProbeRecords& records = analysis.probe().records();
    for (const StateRebound& rebound : records.state_rebound) {
      if (!rebound.freed) continue;
      named.emplace(rebound.graph, rebound.address_at_capture);
      freed[{rebound.graph, trace::TensorRoleName(rebound.role)}].push_back(&rebound);
    }
    for (const auto& [key, events] : freed) findings->push_back(NamedFreed(trace, records, events));
    for (const GraphContract& contract : ReadGraphContracts(analysis)) {
      const uint64_t python_graph = contract.tensors != nullptr ? contract.tensors->graph : 0;
      for (const FreedUse& freed : contract.freed) {
        const auto [first, last] = named.equal_range(python_graph);
        const bool reported = std::any_of(first, last, [&](const auto& entry) {
          return entry.second >= freed.block.address && entry.second < freed.block.address + freed.block.bytes;
        });
        if (reported) continue;
        findings->push_back(BlockFreed(analysis, contract, freed));
        break;  // one finding per graph: the first block freed
      }
    }
  }

 private:
  // The probe's: named tensors of one role whose memory is gone (`events`, the first seen first). Where: the line
  // that dropped the first, when the probe saw it.
  Finding NamedFreed(const trace::Trace& trace, const trace::ProbeRecords& records,
                     const std::vector<const StateRebound*>& events) const {
    const StateRebound& event = *events.front();
    const std::string name(event.name);
    const std::string role(trace::TensorRoleName(event.role));
    const std::string noun = event.role == TensorRole::kOptimizerState ? "optimizer state tensor" : role;
    const trace::TensorReleased* released = nullptr;
    for (const trace::TensorReleased& e : records.tensors_released) {
      if (e.at.time_ns > event.at.time_ns) break;
      if (e.graph == event.graph && e.address == event.address_at_capture) released = &e;
    }
    Finding finding = NewFinding();
    finding.message = absl::StrCat(
        "The ", noun, " ", name, ", which the graph", trace::CapturedAt(trace, event.graph), " reads, ",
        event.address_now != 0 ? "is a new tensor now" : "is gone", ", and the memory it had at capture was freed",
        released != nullptr ? " when this line dropped it" : "",
        ": every replay still reads and writes that memory, which the caching allocator hands to other tensors.");
    if (events.size() > 1) {
      finding.message += absl::StrCat(
          " Freed with it: ", Plural(events.size() - 1, absl::StrCat("more ", noun), absl::StrCat("more ", noun, "s")),
          " that the graph reads.");
    }
    for (size_t i = 0; i < events.size() && i < 5; ++i) {
      const StateRebound& e = *events[i];
      finding.evidence.push_back(
          absl::StrFormat("%s %s: 0x%x at capture (freed), %s now", role, e.name, e.address_at_capture,
                          e.address_now != 0 ? absl::StrFormat("0x%x", e.address_now) : std::string("none")));
    }
    if (events.size() > 5) finding.evidence.push_back(absl::StrCat("and ", events.size() - 5, " more"));
    if (released != nullptr) {
      const std::string replay = trace::ProgramSite(trace::PythonFrames(trace, event.at.stack));
      if (!replay.empty()) finding.evidence.push_back(absl::StrCat("the graph was replayed after it at ", replay));
    }
    finding.where = ProbeEventLocation(trace, released != nullptr ? released->at : event.at);
    finding.where.key = name;
    finding.fix = kFix;
    return finding;
  }

  // The manifest's: a block of the program's memory the graph names, freed, then the graph launched; or the
  // graph's own output, let go and taken by a later capture, then the graph launched.
  Finding BlockFreed(const TraceAnalysis& analysis, const GraphContract& contract, const FreedUse& freed) const {
    const trace::Trace& trace = analysis.trace();
    const size_t end_call = *analysis.captures().windows()[contract.window].end_call;
    const trace::ApiCall& replay = trace.api_calls[freed.replay_call];
    const std::string after = absl::StrFormat(
        "%.1f ms",
        (static_cast<double>(freed.block.free_ns) - static_cast<double>(trace.api_calls[end_call].start_ns)) / 1e6);
    Finding finding = NewFinding();
    if (freed.kind == FreedUse::Kind::kOutputsDropped) {
      finding.message = absl::StrCat(
          "The graph", CaptureSite(analysis, contract),
          " writes only memory its capture allocated, and the program "
          "let go of all of it (",
          Plural(freed.outputs, "block", "blocks"), " left allocated at the capture's end: its outputs), the last ",
          after,
          " after the capture; this launch came after that: its result lands in no tensor the program holds, and an "
          "output of another graph read after it holds that graph's older values.");
      const std::string outputs = StaticOutputNames(contract);
      if (!outputs.empty()) finding.evidence.push_back(absl::StrCat("outputs named at capture: ", outputs));
    } else if (freed.kind == FreedUse::Kind::kOutputRetaken) {
      finding.message = absl::StrCat(
          "The graph", CaptureSite(analysis, contract), " writes its output at ",
          absl::StrFormat("0x%x", freed.address), ", in a block of ", MibText(freed.block.bytes),
          " its capture allocated; the program let go of that output ", after,
          " after the capture, a later capture in the same pool took the memory and still holds it, and this graph "
          "was launched again: each launch writes its result over the later graph's live tensor, and no tensor the "
          "program holds has this graph's result.");
    } else {
      finding.message = absl::StrCat(
          "The graph", CaptureSite(analysis, contract), " names address ", absl::StrFormat("0x%x", freed.address),
          ", inside a block of ", MibText(freed.block.bytes),
          " the program allocated before the capture; the caching allocator freed that block ", after,
          " after the capture, and the graph was launched again after that: the launch reads and writes memory "
          "the allocator may have handed to another tensor.");
    }
    finding.evidence.push_back(absl::StrFormat("block 0x%x (%d bytes) freed at %.3f s; graph %u launched at %.3f s",
                                               freed.block.address, freed.block.bytes, freed.block.free_ns / 1e9,
                                               contract.graph_id, replay.start_ns / 1e9));
    finding.where = LaunchSite(analysis, contract.graph_id, freed.replay_call);
    if (FirstUserFrame(finding.where) == nullptr) finding.where = analysis.Locate(end_call);
    finding.fix = freed.kind == FreedUse::Kind::kProgramBlock ? kFix : kOutputFix;
    return finding;
  }
};

}  // namespace

std::unique_ptr<Check> NewGraphReadsFreedCheck() { return std::make_unique<GraphReadsFreedCheck>(); }

}  // namespace graphcheck::checks
