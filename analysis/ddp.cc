#include "analysis/ddp.h"

#include "absl/strings/str_cat.h"
#include "analysis/trace_analysis.h"

namespace graphcheck::analysis {
namespace {

// The capture window on `thread_id` that was open at `time_ns`. The probe's event comes from the capturing thread,
// between the window's begin and end calls.
std::optional<size_t> WindowAt(const trace::Trace& trace, const std::vector<CaptureWindow>& windows, uint32_t thread_id,
                               uint64_t time_ns) {
  for (size_t w = 0; w < windows.size(); ++w) {
    const OpenSpan span = OpenSpanOf(trace, windows[w]);
    if (windows[w].thread_id == thread_id && span.begin_ns <= time_ns && time_ns <= span.end_ns) return w;
  }
  return std::nullopt;
}

}  // namespace

std::vector<DdpModule> DdpModules(const TraceAnalysis& analysis) {
  const trace::Trace& trace = analysis.trace();
  const std::vector<CaptureWindow>& windows = analysis.captures().windows();
  std::vector<DdpModule> modules;
  auto module_of = [&](uint64_t id) -> DdpModule& {
    for (DdpModule& module : modules) {
      if (module.id == id) return module;
    }
    modules.push_back({id, nullptr, {}});
    return modules.back();
  };
  // A module's constructor comes before its forwards.
  const trace::ProbeRecords& records = analysis.probe().records();
  for (const trace::DdpConstructed& constructed : records.ddp_constructed) {
    module_of(constructed.module).constructed = &constructed;
  }
  for (const trace::DdpCapturedForward& forward : records.ddp_captured_forwards) {
    module_of(forward.module)
        .captured_forwards.push_back({&forward, WindowAt(trace, windows, forward.at.thread_id, forward.at.time_ns)});
  }
  return modules;
}

const CaptureProblem* FirstProblemIn(const CaptureAnalysis& captures, size_t window,
                                     std::optional<CaptureCause> cause) {
  for (const CaptureProblem& problem : captures.problems()) {
    if (problem.window == window && (!cause || problem.cause == *cause)) return &problem;
  }
  return nullptr;
}

bool DdpNamesTheCause(const TraceAnalysis& analysis, const CaptureProblem& problem) {
  if (!problem.window) return false;
  for (const DdpModule& module : DdpModules(analysis)) {
    for (const DdpCapturedForward& forward : module.captured_forwards) {
      if (forward.window != problem.window) continue;
      if (WarmupIterations(forward) < kDdpWarmupIterations) return true;
      const bool default_stream = module.constructed != nullptr && module.constructed->on_default_stream;
      if (default_stream && problem.cause == CaptureCause::kLegacyStream) return true;
    }
  }
  return false;
}

std::string DescribeProblem(const trace::Trace& trace, const CaptureProblem& problem) {
  const trace::ApiCall& call = trace.api_calls[problem.call];
  const int32_t code = trace.Detail(call).return_code;
  return absl::StrCat(trace.String(trace.Detail(call).name), code == 0 ? "" : absl::StrCat(" failed with ", code), " (",
                      CauseCheckId(problem.cause), ")");
}

}  // namespace graphcheck::analysis
