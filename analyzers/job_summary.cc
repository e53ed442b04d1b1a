#include "analyzers/job_summary.h"

namespace graphcheck::analyzers {

ProcessSummary SummarizeProcess(const TraceAnalysis& analysis) {
  const trace::Trace& trace = analysis.trace();
  ProcessSummary summary;
  summary.rank = trace.process.rank;
  summary.world_size = trace.process.world_size;
  summary.host = trace.process.hostname;
  summary.pid = trace.process.pid;
  const std::vector<CaptureWindow>& windows = analysis.captures().windows();
  const std::vector<DomainRange> nccl = analysis.nvtx().RangesInDomain("NCCL");
  for (size_t w = 0; w < windows.size(); ++w) {
    if (IsGraphMachinery(analysis.probe().Origin(w))) continue;
    const CaptureWindow& window = windows[w];
    CaptureSummary& capture = summary.captures.emplace_back();
    if (window.end_call) {
      const trace::CallDetail& end = trace.Detail(trace.api_calls[*window.end_call]);
      capture.made_graph = end.return_code == 0;
      capture.nodes = end.node_count;
    }
    capture.kernel_sequence = window.kernel_sequence;
    const OpenSpan span = OpenSpanOf(trace, window);
    capture.collectives = CollectivesBetween(nccl, span.begin_ns, span.end_ns);
    capture.where = analysis.Locate(window.begin_call);
  }
  return summary;
}

}  // namespace graphcheck::analyzers
