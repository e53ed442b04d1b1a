// replay-order: graphs that share a memory pool were replayed in another order than they were captured in. A graph
// captured into a pool after another may reuse the blocks the earlier one freed, so PyTorch documents sharing a pool
// as safe only when the graphs are replayed in capture order: going back to an earlier graph (other than starting the
// sequence again from the first) lets it overwrite what a later graph still holds. The seeds' error table lists it as
// "PP replay order mismatch" (Transformer Engine graphs replayed against their _order). Pools come from the Python
// probe's capture-end events, graphs' replays from cudaGraphLaunch; torch.compile's cudagraph trees order their own
// replays and are left out.
#include <map>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analysis/python_probe.h"
#include "analysis/trace_analysis.h"
#include "checks/checks.h"
#include "core/check_ids.h"
#include "trace/api_names.h"

namespace graphcheck::checks {

using analysis::CaptureWindow;
using analysis::HoldsActivationsForBackward;
using analysis::LibraryGraphName;
using analysis::ProbeIndex;
using analysis::ProgramPoolOf;
using analysis::TraceAnalysis;

namespace {

struct PooledGraph {
  uint64_t pool = 0;
  size_t index = 0;                            // capture order within its pool
  const trace::CaptureBegin* begin = nullptr;  // the probe's capture-begin
  uint64_t captured_ns = 0;                    // its capture's end
  trace::ProbeOrigin origin = trace::ProbeOrigin::kUnknown;
};

struct Violation {
  size_t call = 0;  // the replay that went back
  uint64_t graph = 0, previous = 0;
  // The program ran GPU work (a copy, a kernel) between the later graph's replay and this one: it may have consumed
  // the later graph's outputs already (a serving loop that clones each bucket's output), which is safe.
  bool consumed = false;
};

// Whether eager GPU work (a kernel, copy or memset outside captures) was launched between calls `from` and `to`.
bool EagerWorkBetween(const trace::Trace& trace, size_t from, size_t to) {
  for (size_t k = from + 1; k < to; ++k) {
    const trace::ApiCall& call = trace.api_calls[k];
    if (call.capture_status == trace::CaptureStatus::kNone && trace::IsGpuOperation(call.kind)) return true;
  }
  return false;
}

class ReplayOrderCheck : public CheckOf<TraceAnalysis> {
 public:
  ReplayOrderCheck()
      : CheckOf(CheckInfo{
            check_id::kReplayOrder,
            "Graphs sharing a memory pool were replayed out of capture order",
            Severity::kWarning,
            CheckArea::kState,
            "Graphs captured into one memory pool are safe to replay only in the order they were captured in; going "
            "back to an earlier graph lets it overwrite memory a later one still holds.",
            {}}) {}

 protected:
  void Read(const TraceAnalysis& analysis, const BoundOptions&, std::vector<Finding>* findings) const override {
    const trace::Trace& trace = analysis.trace();
    const std::map<uint64_t, PooledGraph> graphs = PooledGraphs(analysis);
    if (graphs.empty()) return;
    std::map<uint64_t, std::pair<uint64_t, size_t>> last_in_pool;  // pool -> the graph replayed last, its call
    std::map<uint64_t, Violation> first_violation;  // pool -> the first replay that went back, unconsumed first
    for (size_t i = 0; i < trace.api_calls.size(); ++i) {
      const trace::ApiCall& call = trace.api_calls[i];
      if (call.kind != trace::ApiKind::kGraphLaunch || trace.Detail(call).return_code != 0) continue;
      auto graph = graphs.find(trace.Detail(call).graph_id);
      // Replays before the pool's last capture belong to an order that capture may still extend.
      if (graph == graphs.end() || call.start_ns < PoolComplete(graphs, graph->second.pool)) continue;
      const PooledGraph& now = graph->second;
      auto last = last_in_pool.find(now.pool);
      if (last != last_in_pool.end() && now.index != 0 && now.index < graphs.at(last->second.first).index) {
        // A training forward's activations stay in the pool until its backward replays: GPU work in between did not
        // consume them (seen on two H100s: Megatron's pipeline schedule runs its sends and receives between layers).
        const bool consumed = !HoldsActivationsForBackward(graphs.at(last->second.first).origin) &&
                              EagerWorkBetween(trace, last->second.second, i);
        const Violation violation{i, graph->first, last->second.first, consumed};
        auto seen = first_violation.find(now.pool);
        if (seen == first_violation.end() || (seen->second.consumed && !violation.consumed)) {
          first_violation[now.pool] = violation;
        }
      }
      last_in_pool[now.pool] = {graph->first, i};
    }
    for (const auto& [pool, violation] : first_violation) {
      const PooledGraph& later = graphs.at(violation.previous);
      const PooledGraph& earlier = graphs.at(violation.graph);
      Finding finding = NewFinding();
      finding.message = absl::StrFormat(
          "Graph %d of a shared memory pool%s was replayed right after graph %d%s, which was captured after it: graphs "
          "sharing a pool must be replayed in the order they were captured in.",
          earlier.index + 1, Site(trace, earlier), later.index + 1, Site(trace, later));
      if (violation.consumed) {
        // Every time it went back, the program first ran GPU work that may have consumed the later graph's outputs
        // (a serving loop cloning each bucket's output): safe if it did, so a note.
        finding.severity = Severity::kNote;
        absl::StrAppend(&finding.message,
                        " Each time, the program ran GPU work in between (copying the outputs out?): that is safe as "
                        "long as no output of a later graph is read after an earlier graph of the pool replayed.");
      }
      if (ReadAcrossNamed(analysis, graphs, pool)) {
        // output-overwritten names the output read across this pool's replays, at its line: one finding per defect.
        finding.severity = Severity::kNote;
        absl::StrAppend(&finding.message, " output-overwritten names an output of the pool read across such a replay.");
      }
      size_t in_pool = 0;
      for (const auto& [id, g] : graphs) in_pool += g.pool == pool;
      finding.evidence.push_back(absl::StrCat(in_pool, " graphs share the pool, captured in the order 1 to ", in_pool));
      finding.where = analysis.Locate(violation.call);
      finding.fix = earlier.origin == trace::ProbeOrigin::kMegatron
                        ? "Megatron captures its layers' graphs in the order its first iteration ran them: keep the "
                          "schedule of that iteration for training (the same number of microbatches, virtual "
                          "stages and microbatch_group_size_per_vp_stage), or recreate the graphs after changing it."
                        : "Replay the graphs in the order they were captured (for Transformer Engine, capture with "
                          "the _order the schedule replays), or capture graphs whose order changes into separate "
                          "pools.";
      findings->push_back(std::move(finding));
    }
  }

 private:
  // Whether the probe saw the program read a later graph's output of `pool` across an earlier graph's replay (its
  // pool_order.py): a manual capture of the pool named as the graph replayed, or any callables graphed together.
  static bool ReadAcrossNamed(const TraceAnalysis& analysis, const std::map<uint64_t, PooledGraph>& graphs,
                              uint64_t pool) {
    for (const trace::OutputsHeld& held : analysis.probe().records().outputs_held) {
      if (held.overwritten_by == 0) continue;
      for (const auto& [id, graph] : graphs) {
        if (graph.pool != pool) continue;
        if (graph.begin != nullptr && graph.begin->graph == held.overwritten_by) return true;
        if (graph.origin == trace::ProbeOrigin::kGraphedCallables &&
            held.at.origin == trace::ProbeOrigin::kGraphedCallables) {
          return true;
        }
      }
    }
    return false;
  }

  // CUDA graph id -> its pool and place, for pools that hold two graphs or more.
  static std::map<uint64_t, PooledGraph> PooledGraphs(const TraceAnalysis& analysis) {
    const trace::Trace& trace = analysis.trace();
    const ProbeIndex& probe = analysis.probe();
    std::map<uint64_t, PooledGraph> graphs;
    std::map<uint64_t, size_t> captured;  // pool -> graphs so far
    const std::vector<CaptureWindow>& windows = analysis.captures().windows();
    for (size_t w = 0; w < windows.size(); ++w) {
      const std::optional<uint64_t> pool = ProgramPoolOf(probe, w);
      if (!windows[w].end_call || !pool) continue;
      const trace::ApiCall& end = trace.api_calls[*windows[w].end_call];
      const uint64_t graph_id = trace.Detail(end).graph_id;
      if (graph_id == 0 || trace.Detail(end).return_code != 0) continue;
      graphs[graph_id] = PooledGraph{*pool, captured[*pool]++, probe.Begin(w), end.end_ns, probe.Origin(w)};
    }
    for (auto it = graphs.begin(); it != graphs.end();) {
      it = captured[it->second.pool] < 2 ? graphs.erase(it) : std::next(it);
    }
    return graphs;
  }

  static uint64_t PoolComplete(const std::map<uint64_t, PooledGraph>& graphs, uint64_t pool) {
    uint64_t last = 0;
    for (const auto& [id, g] : graphs) {
      if (g.pool == pool) last = std::max(last, g.captured_ns);
    }
    return last;
  }

  // " (Megatron's layer 3 forward graph, captured at train.py:12 in body)", or what of it is known.
  static std::string Site(const trace::Trace& trace, const PooledGraph& graph) {
    if (graph.begin == nullptr) return "";
    const std::string name = LibraryGraphName(*graph.begin);
    const std::string site = trace::CapturedAt(trace, graph.begin->graph);  // " (captured at ...)" or ""
    if (name.empty()) return site;
    return site.empty() ? absl::StrCat(" (", name, ")") : absl::StrCat(" (", name, ", ", site.substr(2));
  }
};

}  // namespace

std::unique_ptr<Check> NewReplayOrderCheck() { return std::make_unique<ReplayOrderCheck>(); }

}  // namespace graphcheck::checks
