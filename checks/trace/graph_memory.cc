// graph-memory: what CUDA graphs hold in memory, and the part that sharing a pool would save. Every capture into a
// private pool keeps the memory it allocated (PyTorch's caching allocator grows the pool with cudaMalloc during
// capture, on the capturing thread, in relaxed mode) for as long as the graph lives. Graphs captured one after
// another into separate pools hold the sum of their pools; captured into one pool (torch.cuda.graph(g2,
// pool=g1.pool()), a shared graph_pool_handle(), one make_graphed_callables call) each capture reuses the blocks the
// earlier ones freed, but not what they left allocated (their outputs, a cuBLAS workspace). So a shared pool holds
// about the largest of (what the earlier graphs left allocated + what this capture allocated) over the graphs in
// capture order. Seen on an H100 (tests/gpu/programs/probe_cases.py, three Linear(4096) graphs whose 32 MiB outputs
// the program keeps): private pools of 98, 64 and 64 MiB; shared, torch.cuda.memory._snapshot showed one pool of
// 162 MiB, which that sum gives and "the largest pool" (98 MiB) did not. The seeds' error table lists "OOM with
// multiple graphs". Pools and what each capture left allocated come from the Python probe's capture-end events;
// without them (a C++ program) graphs are not grouped and nothing is reported.
#include <algorithm>
#include <map>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analysis/memory_forecast.h"
#include "analysis/python_probe.h"
#include "analysis/trace_analysis.h"
#include "checks/checks.h"
#include "core/check_ids.h"
#include "core/plural.h"

namespace graphcheck::checks {

using analysis::BytesLeftAllocated;
using analysis::CaptureWindow;
using analysis::MibText;
using analysis::ProbeEventLocation;
using analysis::ProbeIndex;
using analysis::ProgramPoolOf;
using analysis::TraceAnalysis;

namespace {

using trace::ApiKind;

constexpr double kMiB = 1024.0 * 1024.0;

struct Pool {
  uint64_t bytes = 0;
  size_t graphs = 0;
  const trace::CaptureBegin* first_begin = nullptr;  // the probe's capture-begin of its first graph
};

// One capture into a program's pool, in capture order.
struct PooledCapture {
  uint64_t allocated = 0;        // the pool's growth during the capture
  std::optional<uint64_t> left;  // what the capture left allocated at its end
};

// What one pool shared by `captures`, in capture order, would hold: the most that any capture needed on top of what
// the captures before it left allocated. Without what they left (traces before format 1.5), the largest capture's
// growth: a lower bound.
struct SharedEstimate {
  uint64_t bytes = 0;
  bool lower_bound = false;
};
SharedEstimate EstimateSharedPool(const std::vector<PooledCapture>& captures) {
  uint64_t shared = 0, largest = 0, left_before = 0;
  bool lower_bound = false;
  for (const PooledCapture& capture : captures) {
    shared = std::max(shared, left_before + capture.allocated);
    largest = std::max(largest, capture.allocated);
    left_before += capture.left.value_or(0);
    lower_bound |= !capture.left;
  }
  return {lower_bound ? largest : shared, lower_bound};
}

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

class GraphMemoryCheck : public CheckOf<TraceAnalysis> {
 public:
  GraphMemoryCheck()
      : CheckOf(CheckInfo{
            check_id::kGraphMemory,
            "Graphs hold memory in separate pools that one shared pool would save",
            Severity::kWarning,
            CheckArea::kPerformance,
            "Graphs captured one after another into private memory pools each keep what they allocated; one shared "
            "pool "
            "would keep only what each left allocated (its outputs) and reuse the rest.",
            {{"min-avoidable-mib", "64", "report when sharing one pool would save at least this much, MiB", 0, 1e9}}}) {
  }

 protected:
  void Read(const TraceAnalysis& analysis, const BoundOptions& options, std::vector<Finding>* findings) const override {
    const trace::Trace& trace = analysis.trace();
    const ProbeIndex& probe = analysis.probe();
    std::map<uint64_t, Pool> pools;
    std::vector<PooledCapture> captures;
    const std::vector<CaptureWindow>& windows = analysis.captures().windows();
    for (size_t w = 0; w < windows.size(); ++w) {
      const std::optional<uint64_t> key = ProgramPoolOf(probe, w);
      if (!windows[w].end_call || !key) continue;
      const PooledCapture capture{AllocatedDuring(trace, windows[w]), BytesLeftAllocated(probe, w)};
      captures.push_back(capture);
      Pool& pool = pools[*key];
      pool.bytes += capture.allocated;
      pool.graphs += 1;
      if (pool.first_begin == nullptr) pool.first_begin = probe.Begin(w);
    }
    if (pools.size() < 2) return;
    uint64_t total = 0;
    for (const auto& [key, pool] : pools) total += pool.bytes;
    const SharedEstimate shared = EstimateSharedPool(captures);
    const uint64_t avoidable = total > shared.bytes ? total - shared.bytes : 0;
    if (avoidable / kMiB < options.GetDouble("min-avoidable-mib")) return;
    Finding finding = NewFinding();
    finding.message = absl::StrFormat(
        "%d graphs were captured into %d private memory pools that hold %s in all; captured one after another, they "
        "could share one pool and hold %s %s: %s%s avoidable.",
        captures.size(), pools.size(), MibText(total), shared.lower_bound ? "as little as" : "about",
        MibText(shared.bytes), shared.lower_bound ? "up to " : "", MibText(avoidable));
    std::vector<std::pair<uint64_t, const Pool*>> by_size;
    for (const auto& [key, pool] : pools) by_size.push_back({key, &pool});
    std::stable_sort(by_size.begin(), by_size.end(),
                     [](const auto& a, const auto& b) { return a.second->bytes > b.second->bytes; });
    for (size_t i = 0; i < by_size.size() && i < 5; ++i) {
      const Pool& pool = *by_size[i].second;
      std::string line = absl::StrFormat("pool %d: %s, %s allocated during their captures", i + 1,
                                         Plural(pool.graphs, "graph", "graphs"), MibText(pool.bytes));
      if (const trace::CaptureBegin* begin = pool.first_begin) {
        absl::StrAppend(&line, trace::CapturedAt(trace, begin->graph));
        if (i == 0) finding.where = ProbeEventLocation(trace, begin->at);
      }
      finding.evidence.push_back(std::move(line));
    }
    finding.evidence.push_back(
        shared.lower_bound
            ? "the trace does not say what each capture left allocated (format before 1.5): the shared figure is the "
              "largest capture's, without the outputs earlier graphs keep"
            : "a shared pool keeps what each capture left allocated (its outputs) and reuses the rest for the next");
    if (by_size.size() > 5) {
      finding.evidence.push_back(absl::StrCat("and ", Plural(by_size.size() - 5, "more pool", "more pools")));
    }
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

}  // namespace graphcheck::checks
