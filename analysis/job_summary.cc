#include "analysis/job_summary.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace graphcheck::analysis {
namespace {

std::string HowItStopped(const TraceAnalysis& analysis) {
  const trace::Trace& trace = analysis.trace();
  switch (trace.integrity.end) {
    case trace::TraceEnd::kCrashed:
      return absl::StrCat("crashed (signal ", trace.integrity.signal, ")");
    case trace::TraceEnd::kRunning:
      return "was killed (its trace has no end)";
    case trace::TraceEnd::kHung:
      return "waited past --hang-timeout and was ended";
    default:
      break;
  }
  const std::vector<trace::PythonExceptionRecord>& exceptions = analysis.probe().records().exceptions;
  const bool uncaught = std::any_of(exceptions.begin(), exceptions.end(),
                                    [](const trace::PythonExceptionRecord& e) { return !e.in_capture; });
  return uncaught ? "stopped on an uncaught exception" : "";
}

}  // namespace

ProcessSummary SummarizeProcess(const TraceAnalysis& analysis) {
  const trace::Trace& trace = analysis.trace();
  ProcessSummary summary;
  summary.rank = trace.process.rank;
  summary.world_size = trace.process.world_size;
  summary.host = trace.process.hostname;
  summary.pid = trace.process.pid;
  const std::vector<CaptureWindow>& windows = analysis.captures().windows();
  const std::vector<DomainRange> nccl = analysis.nvtx().RangesInDomain("NCCL");
  std::vector<uint32_t> capture_numbers(windows.size(), 0);
  for (size_t w = 0; w < windows.size(); ++w) {
    if (IsGraphMachinery(analysis.probe().Origin(w))) continue;
    capture_numbers[w] = static_cast<uint32_t>(summary.captures.size() + 1);
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
    const trace::CaptureBegin* begin = analysis.probe().Begin(w);
    if (begin != nullptr && begin->at.origin == trace::ProbeOrigin::kMegatron) {
      summary.megatron_layers.push_back(begin->megatron_layer);
    }
  }
  summary.ledgers = BuildCollectiveLedgers(analysis, nccl, capture_numbers);
  summary.hung = !trace.hangs.empty();
  summary.ledger_lossy = std::any_of(
      trace.integrity.losses.begin(), trace.integrity.losses.end(),
      [](const trace::LossCount& loss) { return loss.kind == trace::LossKind::kWriterDropped && loss.count > 0; });
  summary.stopped = HowItStopped(analysis);
  std::sort(summary.megatron_layers.begin(), summary.megatron_layers.end());
  summary.megatron_layers.erase(std::unique(summary.megatron_layers.begin(), summary.megatron_layers.end()),
                                summary.megatron_layers.end());
  return summary;
}

}  // namespace graphcheck::analysis
