// graph-memory: what CUDA graphs hold in memory, and the part that sharing a pool would save. Every capture into a
// private pool keeps the memory it allocated (PyTorch's caching allocator grows the pool with cudaMalloc during
// capture, on the capturing thread, in relaxed mode) for as long as the graph lives. Graphs captured one after
// another into separate pools hold the sum of their pools; captured into one pool (torch.cuda.graph(g2,
// pool=g1.pool()), a shared graph_pool_handle(), one make_graphed_callables call) they reuse each other's freed blocks
// and hold about the largest. The seeds' error table lists "OOM with multiple graphs". Pools come from the Python
// probe's capture-end events; without them (a C++ program) graphs are not grouped and nothing is reported.
#include <algorithm>
#include <map>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analyzers/checks.h"
#include "analyzers/python_probe.h"
#include "analyzers/trace_analysis.h"

namespace graphcheck::analyzers {
namespace {

using trace::ApiKind;
using trace::ProbeEvent;

constexpr double kMiB = 1024.0 * 1024.0;

struct Pool {
  uint64_t bytes = 0;
  size_t graphs = 0;
  std::optional<size_t> first_begin_event;  // the probe's capture-begin of its first graph
};

// Bytes the capturing thread allocated on the device during capture window `w` (successful calls only).
uint64_t AllocatedDuring(const trace::Trace& trace, const CaptureWindow& w) {
  uint64_t bytes = 0;
  const size_t end = w.end_call ? *w.end_call : trace.api_calls.size();
  for (size_t i = w.begin_call; i < end && i < trace.api_calls.size(); ++i) {
    const trace::ApiCall& call = trace.api_calls[i];
    if (call.thread_id != w.thread_id || (call.kind != ApiKind::kMalloc && call.kind != ApiKind::kMallocAsync)) {
      continue;
    }
    const trace::CallDetail& d = trace.Detail(call);
    if (d.return_code == 0) bytes += d.bytes;
  }
  return bytes;
}

std::string Mib(uint64_t bytes) { return absl::StrFormat("%.0f MiB", bytes / kMiB); }

class GraphMemoryCheck : public AnalyzerCheck {
 public:
  const CheckInfo& info() const override {
    static const CheckInfo kInfo{
        "graph-memory",
        "Graphs hold memory in separate pools that one shared pool would save",
        Severity::kWarning,
        CheckArea::kPerformance,
        "Graphs captured one after another into private memory pools each keep what they allocated; sharing one "
        "pool would hold about the largest of them instead of the sum.",
        {{"min-avoidable-mib", "64", "report when sharing one pool would save at least this much, MiB", 0, 1e9}}};
    return kInfo;
  }

 protected:
  void Analyze(const TraceAnalysis& analysis, const BoundOptions& options,
               std::vector<Finding>* findings) const override {
    const trace::Trace& trace = analysis.trace();
    const ProbeIndex& probe = analysis.probe();
    std::map<uint64_t, Pool> pools;
    const std::vector<CaptureWindow>& windows = analysis.captures().windows();
    for (size_t w = 0; w < windows.size(); ++w) {
      const std::optional<uint64_t> key = ProgramPoolOf(trace, probe, w);
      if (!windows[w].end_call || !key) continue;
      Pool& pool = pools[*key];
      pool.bytes += AllocatedDuring(trace, windows[w]);
      pool.graphs += 1;
      if (!pool.first_begin_event) pool.first_begin_event = probe.BeginEvent(w);
    }
    if (pools.size() < 2) return;
    uint64_t total = 0, largest = 0;
    size_t graphs = 0;
    for (const auto& [key, pool] : pools) {
      total += pool.bytes;
      largest = std::max(largest, pool.bytes);
      graphs += pool.graphs;
    }
    const uint64_t avoidable = total - largest;
    if (avoidable / kMiB < options.GetDouble("min-avoidable-mib")) return;
    Finding finding = NewFinding();
    finding.message = absl::StrFormat(
        "%d graphs were captured into %d private memory pools that hold %s in all; captured one after another, they "
        "could share one pool and hold about %s: %s avoidable.",
        graphs, pools.size(), Mib(total), Mib(largest), Mib(avoidable));
    std::vector<std::pair<uint64_t, const Pool*>> by_size;
    for (const auto& [key, pool] : pools) by_size.push_back({key, &pool});
    std::stable_sort(by_size.begin(), by_size.end(),
                     [](const auto& a, const auto& b) { return a.second->bytes > b.second->bytes; });
    for (size_t i = 0; i < by_size.size() && i < 5; ++i) {
      const Pool& pool = *by_size[i].second;
      std::string line = absl::StrFormat("pool %d: %d graph(s), %s allocated during their captures", i + 1, pool.graphs,
                                         Mib(pool.bytes));
      if (pool.first_begin_event) {
        const ProbeEvent& begin = trace.probe_events[*pool.first_begin_event];
        absl::StrAppend(&line, CapturedAt(trace, begin.graph));
        if (i == 0) finding.where = ProbeEventLocation(trace, begin);
      }
      finding.evidence.push_back(std::move(line));
    }
    if (by_size.size() > 5) finding.evidence.push_back(absl::StrCat("and ", by_size.size() - 5, " more pools"));
    finding.fix =
        "Capture graphs that run one after another into one pool: torch.cuda.graph(g2, pool=g1.pool()), or one "
        "torch.cuda.graph_pool_handle() passed to every capture; give make_graphed_callables all the callables in "
        "one call (it shares one pool among them). Sharing is safe only when the graphs are replayed in the order "
        "they were captured and never concurrently.";
    findings->push_back(std::move(finding));
  }
};

}  // namespace

std::unique_ptr<Check> NewGraphMemoryCheck() { return std::make_unique<GraphMemoryCheck>(); }

}  // namespace graphcheck::analyzers
