#include "analysis/collective_ledger.h"

#include <algorithm>
#include <map>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "analysis/trace_analysis.h"
#include "core/plural.h"
#include "trace/python_frames.h"

namespace graphcheck::analysis {
namespace {

// Interns `text` into `table`.
uint32_t Intern(const std::string& text, std::vector<std::string>* table,
                absl::flat_hash_map<std::string, uint32_t>* index) {
  const auto [it, added] = index->try_emplace(text, static_cast<uint32_t>(table->size()));
  if (added) table->push_back(text);
  return it->second;
}

// A call's site: the program's frame of its Python stack.
struct Site {
  std::string text;  // "train.py:52 in step", "thread pt_autograd_0", ""
  SourceFrame frame;
};

Site SiteOfStack(const trace::Trace& trace, trace::PythonStackId stack) {
  const std::vector<SourceFrame> frames = trace::PythonFrames(trace, stack);
  Site site{trace::ProgramSite(frames), {}};
  if (const SourceFrame* user = FirstUserFrame(frames)) site.frame = *user;
  return site;
}

// Builds one communicator's ledger: interns its sites, names and graphs as entries arrive.
class LedgerBuilder {
 public:
  explicit LedgerBuilder(uint64_t communicator) {
    ledger_.communicator = communicator;
    site_index_[""] = 0;
  }
  uint32_t AddGraph(LedgerGraph graph) {
    ledger_.graphs.push_back(std::move(graph));
    return static_cast<uint32_t>(ledger_.graphs.size() - 1);
  }
  void AppendReplay(uint32_t graph, const Site& site) {
    ledger_.Append(LedgerEntry::Kind::kReplay, graph, AddSite(site));
  }
  void AppendEager(absl::string_view name, const Site& site) {
    ledger_.Append(LedgerEntry::Kind::kEager, Intern(std::string(name), &ledger_.names, &name_index_), AddSite(site));
  }
  CollectiveLedger Take() { return std::move(ledger_); }

 private:
  uint32_t AddSite(const Site& site) {
    const uint32_t id = Intern(site.text, &ledger_.sites, &site_index_);
    if (id == ledger_.site_frames.size()) ledger_.site_frames.push_back(site.frame);
    return id;
  }
  CollectiveLedger ledger_;
  absl::flat_hash_map<std::string, uint32_t> site_index_;
  absl::flat_hash_map<std::string, uint32_t> name_index_;
};

// The builders of a process's ledgers, by communicator; kWholeProcess's holds every entry.
using Builders = std::map<uint64_t, LedgerBuilder>;
constexpr uint64_t kWholeProcess = 0;

LedgerBuilder& BuilderOf(uint64_t communicator, Builders* builders) {
  return builders->try_emplace(communicator, communicator).first->second;
}

// Where a collective-bearing graph sits in the ledgers: (communicator, graph index in its ledger) for each ledger
// that holds it.
using GraphPlaces = std::vector<std::pair<uint64_t, uint32_t>>;

// The graphs of the captures that hold NCCL work, by the CUPTI id of the graph each made, added to the process's
// ledger with all their calls and to the ledger of each named communicator they call on with its calls.
absl::flat_hash_map<uint64_t, GraphPlaces> CollectiveGraphs(const TraceAnalysis& analysis,
                                                            const std::vector<uint32_t>& capture_numbers,
                                                            const std::vector<DomainRange>& nccl, Builders* builders) {
  const trace::Trace& trace = analysis.trace();
  absl::flat_hash_map<uint64_t, GraphPlaces> by_graph_id;
  const std::vector<CaptureWindow>& windows = analysis.captures().windows();
  for (size_t w = 0; w < windows.size(); ++w) {
    const CaptureWindow& window = windows[w];
    if (!window.end_call) continue;
    const trace::CallDetail& end = trace.Detail(trace.api_calls[*window.end_call]);
    if (end.return_code != 0 || end.graph_id == 0) continue;
    const OpenSpan span = OpenSpanOf(trace, window);
    LedgerGraph graph;
    graph.collectives = CollectivesBetween(nccl, span.begin_ns, span.end_ns);
    for (size_t i = window.begin_call; i < *window.end_call; ++i) {
      const trace::ApiCall& call = trace.api_calls[i];
      if (call.kind == trace::ApiKind::kKernelLaunch && call.capture_id == window.capture_id &&
          IsNcclKernel(trace.String(trace.Detail(call).kernel_name))) {
        ++graph.nccl_kernels;
      }
    }
    if (graph.collectives.empty() && graph.nccl_kernels == 0) continue;
    graph.captured_at = trace::ProgramSite(analysis.Locate(window.begin_call).python);
    graph.capture = w < capture_numbers.size() ? capture_numbers[w] : 0;
    GraphPlaces& places = by_graph_id[end.graph_id];
    places.emplace_back(kWholeProcess, BuilderOf(kWholeProcess, builders).AddGraph(graph));
    for (auto& [communicator, runs] : CollectivesByCommunicator(nccl, span.begin_ns, span.end_ns)) {
      if (communicator == 0) continue;  // calls that name none: in the process's ledger only
      LedgerGraph on_communicator = graph;
      on_communicator.collectives = std::move(runs);
      on_communicator.nccl_kernels = 0;  // the kernels do not say their communicator
      places.emplace_back(communicator, BuilderOf(communicator, builders).AddGraph(std::move(on_communicator)));
    }
  }
  return by_graph_id;
}

// The spans in which some capture was open, merged, by begin: an NCCL call inside one is captured, not eager.
std::vector<OpenSpan> CaptureSpans(const TraceAnalysis& analysis) {
  std::vector<OpenSpan> spans;
  for (const CaptureWindow& window : analysis.captures().windows()) {
    spans.push_back(OpenSpanOf(analysis.trace(), window));
  }
  std::sort(spans.begin(), spans.end(), [](const OpenSpan& a, const OpenSpan& b) { return a.begin_ns < b.begin_ns; });
  std::vector<OpenSpan> merged;
  for (const OpenSpan& span : spans) {
    if (!merged.empty() && span.begin_ns <= merged.back().end_ns) {
      merged.back().end_ns = std::max(merged.back().end_ns, span.end_ns);
    } else {
      merged.push_back(span);
    }
  }
  return merged;
}

// Where eager NCCL calls came from: the torch.distributed call around each (the probe's WAIT_BEGIN .. WAIT_END, under
// --hang-timeout, with its stack), else its thread's name. Asked in order of the calls' start.
class EagerSites {
 public:
  explicit EagerSites(const trace::Trace& trace) : trace_(trace) {
    absl::flat_hash_map<uint32_t, size_t> open;  // thread -> its open wait
    for (const trace::ProbeEvent& event : trace.probe_events) {
      std::vector<Wait>& waits = waits_[event.thread_id];
      if (event.kind == trace::ProbeEventKind::kWaitBegin) {
        open[event.thread_id] = waits.size();
        waits.push_back({event.time_ns, ~uint64_t{0}, event.stack});
      } else if (event.kind == trace::ProbeEventKind::kWaitEnd) {
        if (auto it = open.find(event.thread_id); it != open.end()) {
          waits[it->second].end_ns = event.time_ns;
          open.erase(it);
        }
      }
    }
  }

  Site SiteOf(const DomainRange& call) {
    // A thread waits in one call at a time, so its waits are ordered by begin and by end alike.
    if (auto it = waits_.find(call.thread_id); it != waits_.end()) {
      size_t& next = next_[call.thread_id];
      const std::vector<Wait>& waits = it->second;
      while (next < waits.size() && waits[next].end_ns < call.start_ns) ++next;
      if (next < waits.size() && waits[next].begin_ns <= call.start_ns) {
        Site site = SiteOfStack(trace_, waits[next].stack);
        if (!site.text.empty()) return site;
      }
    }
    const absl::string_view thread = trace_.ThreadNameOf(call.thread_id);
    return {thread.empty() ? "" : absl::StrCat("thread ", thread), {}};
  }

 private:
  struct Wait {
    uint64_t begin_ns = 0;
    uint64_t end_ns = 0;  // ~0: never ended (the hang)
    trace::PythonStackId stack = 0;
  };
  const trace::Trace& trace_;
  absl::flat_hash_map<uint32_t, std::vector<Wait>> waits_;
  absl::flat_hash_map<uint32_t, size_t> next_;
};

}  // namespace

bool IsLedgerCollective(absl::string_view nccl_function) {
  static constexpr absl::string_view kCollectives[] = {
      "ncclAllReduce", "ncclAllGather", "ncclReduceScatter", "ncclBroadcast", "ncclBcast",
      "ncclReduce",    "ncclAllToAll",  "ncclAlltoAll",      "ncclGather",    "ncclScatter"};
  return std::find(std::begin(kCollectives), std::end(kCollectives), nccl_function) != std::end(kCollectives);
}

void CollectiveLedger::Append(LedgerEntry::Kind kind, uint32_t what, uint32_t site) {
  const uint64_t key = KeyOf(kind, what);
  all_fingerprint = absl::HashOf(all_fingerprint, key);
  if (kind == LedgerEntry::Kind::kReplay) {
    ++replays;
    ++graphs[what].replays;
    replay_fingerprint = absl::HashOf(replay_fingerprint, key);
  } else {
    ++eager;
    eager_fingerprint = absl::HashOf(eager_fingerprint, key);
  }
  if (!entries.empty()) {
    LedgerEntry& last = entries.back();
    if (!truncated && last.kind == kind && last.what == what && last.site == site) {
      ++last.count;
      return;
    }
  }
  if (entries.size() >= kMaxLedgerEntries) {
    truncated = true;
    return;
  }
  entries.push_back({kind, what, site, 1});
}

uint64_t CollectiveLedger::KeyOf(LedgerEntry::Kind kind, uint32_t what) const {
  if (kind == LedgerEntry::Kind::kEager) return absl::HashOf(1, names[what]);
  const LedgerGraph& graph = graphs[what];
  uint64_t key = absl::HashOf(2, graph.nccl_kernels);
  for (const CollectiveRun& run : graph.collectives) key = absl::HashOf(key, run.name, run.count);
  return key;
}

std::string CollectiveLedger::GraphText(uint32_t graph_index) const {
  const LedgerGraph& graph = graphs[graph_index];
  return absl::StrCat("the graph ",
                      graph.captured_at.empty() ? absl::StrCat("of capture ", graph.capture)
                                                : absl::StrCat("captured at ", graph.captured_at),
                      " (",
                      graph.collectives.empty() ? Plural(graph.nccl_kernels, "NCCL kernel", "NCCL kernels")
                                                : DescribeCollectives(graph.collectives),
                      ")");
}

std::string CollectiveLedger::Describe(const LedgerEntry& entry) const {
  if (entry.kind == LedgerEntry::Kind::kEager) return absl::StrCat("an eager ", names[entry.what]);
  return absl::StrCat("a replay of ", GraphText(entry.what));
}

std::string CollectiveLedger::SiteText(uint32_t site) const {
  if (site == 0 || site >= sites.size()) return "";
  return absl::StartsWith(sites[site], "thread ") ? absl::StrCat(" on ", sites[site])
                                                  : absl::StrCat(" at ", sites[site]);
}

CollectiveLedgers BuildCollectiveLedgers(const TraceAnalysis& analysis, const std::vector<DomainRange>& nccl,
                                         const std::vector<uint32_t>& capture_numbers) {
  const trace::Trace& trace = analysis.trace();
  CollectiveLedgers result;
  Builders builders;
  const absl::flat_hash_map<uint64_t, GraphPlaces> graphs =
      CollectiveGraphs(analysis, capture_numbers, nccl, &builders);
  const std::vector<OpenSpan> spans = CaptureSpans(analysis);
  EagerSites eager_sites(trace);

  // The graph launches and the eager NCCL calls, merged by time (both come sorted by start).
  size_t span = 0;
  size_t next_call = 0;
  auto append_launches_before = [&](uint64_t time_ns) {
    for (; next_call < trace.api_calls.size() && trace.api_calls[next_call].start_ns <= time_ns; ++next_call) {
      const trace::ApiCall& call = trace.api_calls[next_call];
      if (call.kind != trace::ApiKind::kGraphLaunch) continue;
      const trace::CallDetail& detail = trace.Detail(call);
      if (detail.return_code != 0) continue;
      const auto graph = graphs.find(detail.graph_id);
      if (graph == graphs.end()) continue;
      const Site site = SiteOfStack(trace, detail.python_stack);
      for (const auto& [communicator, index] : graph->second)
        BuilderOf(communicator, &builders).AppendReplay(index, site);
    }
  };
  for (const DomainRange& call : nccl) {
    if (!IsLedgerCollective(call.name)) continue;
    while (span < spans.size() && spans[span].end_ns < call.start_ns) ++span;
    if (span < spans.size() && spans[span].begin_ns <= call.start_ns) continue;  // captured
    append_launches_before(call.start_ns);
    const Site site = eager_sites.SiteOf(call);
    BuilderOf(kWholeProcess, &builders).AppendEager(call.name, site);
    if (call.communicator != 0) BuilderOf(call.communicator, &builders).AppendEager(call.name, site);
  }
  append_launches_before(~uint64_t{0});
  for (auto& [communicator, builder] : builders) {
    if (communicator == kWholeProcess) {
      result.process = builder.Take();
    } else {
      result.communicators.push_back(builder.Take());
    }
  }
  return result;
}

}  // namespace graphcheck::analysis
