// hang: under `graphcheck run --hang-timeout`, a thread waited in a synchronizing CUDA call, or in a wait the Python
// probe announced (destroy_process_group, a barrier, a blocking collective, a thread join), longer than the bound and
// the recorder ended the process (trace::Hang, TraceEnd::kHung). A teardown that waits names the captured graphs still
// alive that hold NCCL collectives. Says where it waited (the call, the stream, the
// program's line) and what it waited on: the graph it launched last, and the NCCL collectives inside that graph, since
// a collective that another rank never joins is the usual way a replayed graph never finishes. In a job, each rank's
// finding merges into one that names the ranks.
#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "analysis/collectives.h"
#include "analysis/trace_analysis.h"
#include "checks/checks.h"
#include "core/check_ids.h"
#include "core/plural.h"
#include "trace/python_frames.h"

namespace graphcheck::checks {

using analysis::CaptureWindow;
using analysis::CollectiveRun;
using analysis::CollectivesBetween;
using analysis::DescribeCollectives;
using analysis::IsNcclKernel;
using analysis::OpenSpan;
using analysis::OpenSpanOf;
using analysis::TraceAnalysis;

namespace {

// What graph `graph_id`'s capture holds: the node count, its NCCL kernels (name -> launches) and the NCCL calls made
// while it was open (collectives.h).
struct CapturedGraph {
  bool found = false;
  uint32_t nodes = 0;
  std::map<std::string, int> nccl_kernels;
  std::vector<CollectiveRun> nccl_calls;
};

CapturedGraph Captured(const TraceAnalysis& analysis, uint32_t graph_id) {
  CapturedGraph graph;
  const trace::Trace& trace = analysis.trace();
  for (const CaptureWindow& window : analysis.captures().windows()) {
    if (!window.end_call) continue;
    const trace::CallDetail& end = trace.Detail(trace.api_calls[*window.end_call]);
    if (end.graph_id != graph_id) continue;
    graph.found = true;
    graph.nodes = end.node_count;
    const OpenSpan span = OpenSpanOf(trace, window);
    graph.nccl_calls = CollectivesBetween(analysis.nvtx().RangesInDomain("NCCL"), span.begin_ns, span.end_ns);
    for (size_t i = window.begin_call; i < *window.end_call; ++i) {
      const trace::ApiCall& call = trace.api_calls[i];
      if (call.kind != trace::ApiKind::kKernelLaunch || call.capture_id != window.capture_id) continue;
      const std::string name(trace.String(trace.Detail(call).kernel_name));
      if (IsNcclKernel(name)) ++graph.nccl_kernels[name];
    }
  }
  return graph;
}

// The graphs the probe said were alive right before the wait (its graph-alive events, sent before a
// destroy_process_group on the waiting thread), as CUDA graph ids of their captures with the program's capture line.
struct LiveGraph {
  uint32_t graph_id = 0;
  std::string captured_at;
};

std::vector<LiveGraph> LiveGraphsAt(const TraceAnalysis& analysis, const trace::Hang& hang) {
  const trace::Trace& trace = analysis.trace();
  // The probe names the graphs still alive right before it begins the wait, on the waiting thread: those sent after
  // that thread's previous wait mark and before the wait the thread hung in.
  const trace::ProbeRecords& records = analysis.probe().records();
  const trace::ProbeMark* wait = nullptr;
  size_t previous_mark = 0;
  for (const trace::ProbeMark& mark : records.waits) {
    if (mark.at.thread_id != hang.thread_id || mark.at.time_ns > hang.since_ns) continue;
    previous_mark = wait != nullptr ? wait->at.event : 0;
    wait = &mark;
  }
  std::vector<uint64_t> alive;  // Python graph ids
  if (wait != nullptr && wait->begin) {
    for (const trace::GraphAlive& graph : records.graphs_alive) {
      if (graph.at.thread_id == hang.thread_id && graph.at.event > previous_mark && graph.at.event < wait->at.event) {
        alive.push_back(graph.graph);
      }
    }
  }
  std::vector<LiveGraph> graphs;
  const std::vector<CaptureWindow>& windows = analysis.captures().windows();
  for (uint64_t graph : alive) {
    for (size_t w = 0; w < windows.size(); ++w) {
      const trace::CaptureBegin* begin = analysis.probe().Begin(w);
      if (begin == nullptr || begin->graph != graph || !windows[w].end_call) continue;
      graphs.push_back({static_cast<uint32_t>(trace.Detail(trace.api_calls[*windows[w].end_call]).graph_id),
                        trace::CapturedAt(trace, graph)});
    }
  }
  return graphs;
}

class HangCheck : public CheckOf<TraceAnalysis> {
 public:
  HangCheck()
      : CheckOf(CheckInfo{
            check_id::kHang,
            "A process waited longer than --hang-timeout",
            Severity::kError,
            CheckArea::kDistributed,
            "A thread waited in a CUDA synchronize, a process-group teardown, a barrier, a collective or a thread join "
            "longer than `graphcheck run --hang-timeout`, and graphcheck ended the process: where it waited, the graph "
            "it "
            "had launched last and the NCCL collectives inside it, and the graphs still alive that hold collectives.",
            {}}) {}

 protected:
  void Read(const TraceAnalysis& analysis, const BoundOptions&, std::vector<Finding>* findings) const override {
    const trace::Trace& trace = analysis.trace();
    for (const trace::Hang& hang : trace.hangs) {
      const std::string call(trace.String(hang.call));
      Finding finding = NewFinding();
      finding.message = absl::StrFormat(
          "A thread waited %.1f s in %s, longer than --hang-timeout (%.1f s): graphcheck ended the process.",
          static_cast<double>(hang.time_ns - std::min(hang.time_ns, hang.since_ns)) / 1e9, call,
          static_cast<double>(hang.timeout_ns) / 1e9);
      const bool teardown = absl::EndsWith(call, "destroy_process_group");
      std::vector<std::string> holding;  // live graphs that hold collectives
      for (const LiveGraph& live : LiveGraphsAt(analysis, hang)) {
        const CapturedGraph graph = Captured(analysis, live.graph_id);
        if (graph.nccl_kernels.empty() && graph.nccl_calls.empty()) continue;
        holding.push_back(
            absl::StrCat("graph ", live.graph_id, live.captured_at,
                         graph.nccl_calls.empty()
                             ? absl::StrCat(" holds ", Plural(graph.nccl_kernels.size(), "NCCL kernel", "NCCL kernels"))
                             : absl::StrCat(" holds ", DescribeCollectives(graph.nccl_calls))));
      }
      // A teardown held up by live graphs is explained by them, not by a collective that does not pair up; a
      // process-group wait (a barrier, an eager collective) by the ranks that did not join it, not by the last graph.
      const bool held_by_live_graphs = teardown && !holding.empty();
      const bool group_wait = !teardown && absl::StartsWith(call, "torch.distributed.");
      if (group_wait) {
        absl::StrAppend(&finding.message,
                        " It completes only when every rank of the group joins it: a rank that skipped it, or "
                        "stopped or failed before it, leaves the others waiting here.");
      }
      if (call == "cudaGraphLaunch") {
        absl::StrAppend(&finding.message,
                        " A graph launch blocks once the GPU's queue is full behind work that does not finish.");
      }
      if (hang.last_graph_id == 0) {
        finding.evidence.push_back("the thread had launched no CUDA graph: the wait is on work it launched eagerly");
      } else {
        const CapturedGraph graph = Captured(analysis, hang.last_graph_id);
        std::vector<std::string> collectives;
        int launches = 0;
        for (const auto& [name, count] : graph.nccl_kernels) {
          collectives.push_back(absl::StrCat(name, count > 1 ? absl::StrCat(" x", count) : ""));
          launches += count;
        }
        int calls = 0;
        for (const CollectiveRun& run : graph.nccl_calls) calls += static_cast<int>(run.count);
        if ((launches > 0 || calls > 0) && !held_by_live_graphs && !group_wait) {
          absl::StrAppend(&finding.message, " The last graph it launched holds ",
                          Plural(std::max(launches, calls), "NCCL collective", "NCCL collectives"),
                          ": a collective that another rank does not join (it captured other collectives, failed, or "
                          "stopped earlier) never completes.");
        }
        finding.evidence.push_back(absl::StrCat(
            "the last graph this thread launched: graph ", hang.last_graph_id,
            graph.found ? absl::StrCat(" (", Plural(graph.nodes, "node", "nodes"), ")")
                        : " (its capture is not in this trace)",
            collectives.empty() ? "" : absl::StrCat("; NCCL kernels: ", absl::StrJoin(collectives, ", ")),
            graph.nccl_calls.empty() ? "" : absl::StrCat("; NCCL calls: ", DescribeCollectives(graph.nccl_calls))));
      }
      if (hang.stream_id != 0) finding.evidence.push_back(absl::StrCat("the stream waited on: ", hang.stream_id));
      if (!holding.empty()) {
        absl::StrAppend(&finding.message,
                        " Still alive at the wait: ", Plural(holding.size(), "captured graph", "captured graphs"),
                        " holding NCCL collectives; NCCL cannot tear down a communicator whose work a live graph "
                        "holds.");
        for (std::string& line : holding) finding.evidence.push_back(absl::StrCat("still alive: ", std::move(line)));
      }
      finding.where.api = call;
      finding.where.thread_id = hang.thread_id;
      if (hang.stream_id != 0) finding.where.stream_id = hang.stream_id;
      finding.where.python = trace::PythonFrames(trace, hang.stack);
      finding.fix =
          held_by_live_graphs
              ? "Delete the graphs that hold collectives (del graph, or graph.reset()) and synchronize before "
                "torch.distributed.destroy_process_group()."
              : kHangFixWithoutCause;
      findings->push_back(std::move(finding));
    }
  }
};

}  // namespace

const char kHangFixWithoutCause[] =
    "In a job, compare the ranks: one that captured other collectives (rank-divergent-capture), failed a capture, "
    "skipped a barrier or collective, or stopped before the others leaves the rest waiting. In one process, look for "
    "a kernel that waits on a flag or on another stream that never runs. If the wait is legitimate work, raise "
    "--hang-timeout.";

std::unique_ptr<Check> NewHangCheck() { return std::make_unique<HangCheck>(); }

}  // namespace graphcheck::checks
