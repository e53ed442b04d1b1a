#include "analysis/python_probe.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "core/check_ids.h"
#include "core/metrics.h"
#include "trace/python_frames.h"

namespace graphcheck::analysis {
namespace {

constexpr size_t kQuotedExceptionBytes = 300;
constexpr size_t kQuotedExceptionLines = 12;  // of a known message's details

// Whether PyTorch's graph code raised it: the innermost frame (PythonFrames leaves out the probe's own wrappers of
// graph methods) is torch/cuda/graphs.py.
bool RaisedInGraphCode(const trace::Trace& trace, const trace::PythonExceptionRecord& exception) {
  const std::vector<SourceFrame> frames = trace::PythonFrames(trace, exception.at.stack);
  return !frames.empty() && absl::EndsWith(frames.front().file, "torch/cuda/graphs.py");
}

// Assigns each probe capture-begin to the first CUDA capture window its thread began after it (and before the
// thread's next probe capture-begin, and before the probe saw that capture end or fail): the probe writes its event
// just before torch calls cudaStreamBeginCapture. A capture_begin that raised before CUDA's began matches no window.
std::vector<const trace::CaptureBegin*> MatchWindows(const trace::Trace& trace, const trace::ProbeRecords& records,
                                                     const std::vector<CaptureWindow>& windows) {
  // When each begin's graph ended or failed, by the begin's event index.
  std::map<uint64_t, const trace::CaptureBegin*> open;  // graph -> its begin
  std::map<const trace::CaptureBegin*, uint64_t> closed_at;
  auto close = [&](uint64_t graph, uint64_t time_ns) {
    if (auto it = open.find(graph); it != open.end()) {
      closed_at[it->second] = time_ns;
      open.erase(it);
    }
  };
  // Begins, ends and capture exceptions merged in event order.
  size_t end = 0, exception = 0;
  std::map<uint32_t, std::vector<const trace::CaptureBegin*>> begins_by_thread;  // in time order
  auto close_before = [&](size_t event) {
    while (true) {
      const bool has_end = end < records.capture_ends.size() && records.capture_ends[end].at.event < event;
      const bool has_exception =
          exception < records.exceptions.size() && records.exceptions[exception].at.event < event;
      if (!has_end && !has_exception) return;
      if (has_end && (!has_exception || records.capture_ends[end].at.event < records.exceptions[exception].at.event)) {
        close(records.capture_ends[end].graph, records.capture_ends[end].at.time_ns);
        ++end;
      } else {
        const trace::PythonExceptionRecord& e = records.exceptions[exception++];
        if (e.in_capture) close(e.graph, e.at.time_ns);
      }
    }
  };
  for (const trace::CaptureBegin& begin : records.capture_begins) {
    close_before(begin.at.event);
    begins_by_thread[begin.at.thread_id].push_back(&begin);
    open[begin.graph] = &begin;
  }
  close_before(~size_t{0});
  std::vector<const trace::CaptureBegin*> begin_of_window(windows.size(), nullptr);
  for (size_t w = 0; w < windows.size(); ++w) {
    auto thread = begins_by_thread.find(windows[w].thread_id);
    if (thread == begins_by_thread.end()) continue;
    const uint64_t start = trace.api_calls[windows[w].begin_call].start_ns;
    const std::vector<const trace::CaptureBegin*>& begins = thread->second;
    // The last probe begin at or before the CUDA begin.
    auto after = std::upper_bound(begins.begin(), begins.end(), start,
                                  [](uint64_t t, const trace::CaptureBegin* b) { return t < b->at.time_ns; });
    if (after == begins.begin()) continue;
    const trace::CaptureBegin* begin = *std::prev(after);
    auto closed = closed_at.find(begin);
    if (closed != closed_at.end() && closed->second < start) continue;
    begin_of_window[w] = begin;
  }
  // A probe begin matches one window only: the first one after it.
  std::set<const trace::CaptureBegin*> matched;
  for (const trace::CaptureBegin*& begin : begin_of_window) {
    if (begin != nullptr && !matched.insert(begin).second) begin = nullptr;
  }
  return begin_of_window;
}

// The probe's backward-begin and backward-end marks paired by number; a begin left open ends with the trace.
std::vector<BackwardCall> BackwardCalls(const trace::ProbeRecords& records) {
  std::vector<BackwardCall> calls;
  std::map<uint64_t, size_t> open;  // backward number -> index into calls
  for (const trace::ProbeMark& mark : records.backwards) {
    if (mark.begin) {
      open[mark.number] = calls.size();
      calls.push_back({mark.at.time_ns, ~uint64_t{0}, mark.at.thread_id, mark.at.stack});
    } else if (auto it = open.find(mark.number); it != open.end()) {
      calls[it->second].end_ns = mark.at.time_ns;
      open.erase(it);
    }
  }
  std::sort(calls.begin(), calls.end(),
            [](const BackwardCall& a, const BackwardCall& b) { return a.start_ns < b.start_ns; });
  return calls;
}

}  // namespace

ProbeIndex::ProbeIndex(const trace::Trace& trace, const CaptureAnalysis& captures)
    : records_(trace::DecodeProbeRecords(trace)) {
  backwards_ = BackwardCalls(records_);
  const std::vector<CaptureWindow>& windows = captures.windows();
  window_begin_ = MatchWindows(trace, records_, windows);
  window_origin_.assign(windows.size(), trace::ProbeOrigin::kUnknown);
  std::map<const trace::CaptureBegin*, size_t> window_of_begin;
  for (size_t w = 0; w < windows.size(); ++w) {
    if (window_begin_[w] == nullptr) continue;
    window_of_begin[window_begin_[w]] = w;
    window_origin_[w] = window_begin_[w]->at.origin;
  }
  cudagraph_trees_ =
      std::any_of(records_.capture_begins.begin(), records_.capture_begins.end(),
                  [](const trace::CaptureBegin& b) { return b.at.origin == trace::ProbeOrigin::kCudagraphTrees; });
  std::vector<bool> window_has_cause(windows.size(), false);
  for (const CaptureProblem& problem : captures.problems()) {
    if (problem.window) window_has_cause[*problem.window] = true;
  }
  // The capture each exception left: the latest begin of its graph before it that no capture-end closed.
  std::map<uint64_t, const trace::CaptureBegin*> open_capture;  // graph -> its begin
  size_t next_begin = 0, next_end = 0;
  auto advance_to = [&](size_t event) {
    while (true) {
      const bool has_begin =
          next_begin < records_.capture_begins.size() && records_.capture_begins[next_begin].at.event < event;
      const bool has_end = next_end < records_.capture_ends.size() && records_.capture_ends[next_end].at.event < event;
      if (!has_begin && !has_end) return;
      if (has_begin &&
          (!has_end || records_.capture_begins[next_begin].at.event < records_.capture_ends[next_end].at.event)) {
        const trace::CaptureBegin& begin = records_.capture_begins[next_begin++];
        open_capture[begin.graph] = &begin;
      } else {
        open_capture.erase(records_.capture_ends[next_end++].graph);
      }
    }
  };
  std::set<const trace::CaptureBegin*> reported_begins;
  std::vector<std::pair<absl::string_view, absl::string_view>> reported_texts;  // (type, text) of capture exceptions
  for (const trace::PythonExceptionRecord& record : records_.exceptions) {
    advance_to(record.at.event);
    PythonException& exception = exceptions_.emplace_back();
    exception.record = record;
    exception.rule = MatchKnownMessage(record.message, RaisedInGraphCode(trace, record));
    exception.check_id = exception.rule ? exception.rule->check_id : record.in_capture ? check_id::kCaptureError : "";
    const std::pair<absl::string_view, absl::string_view> text(record.type, record.message);
    if (record.in_capture) {
      if (auto open = open_capture.find(record.graph); open != open_capture.end()) {
        exception.begin = open->second;
        if (auto w = window_of_begin.find(open->second); w != window_of_begin.end()) exception.window = w->second;
      }
      const bool first = exception.begin == nullptr || reported_begins.count(exception.begin) == 0;
      exception.reported = first && !(exception.window && window_has_cause[*exception.window]);
      if (exception.begin != nullptr) reported_begins.insert(exception.begin);
      reported_texts.push_back(text);
    } else {
      // The program (or a thread) died of it: worth a finding when a rule knows it, unless it left a capture
      // already reported, or it is CUDA's own text for a capture error whose root cause the trace found (a
      // watchdog-like thread that queried during a global capture: unsafe-api-in-capture reports it).
      const bool cuda_text_explained =
          exception.rule != nullptr && exception.rule->cuda_error != 0 && !captures.problems().empty();
      exception.reported = exception.rule != nullptr && !cuda_text_explained &&
                           std::find(reported_texts.begin(), reported_texts.end(), text) == reported_texts.end();
    }
  }
}

trace::ProbeOrigin ProbeIndex::Origin(size_t window) const {
  return window < window_origin_.size() ? window_origin_[window] : trace::ProbeOrigin::kUnknown;
}

const BackwardCall* ProbeIndex::BackwardAround(uint64_t time_ns, uint32_t thread_id) const {
  // The latest backward begun by then, if it is still running, or the one before it (two threads' backward() calls
  // overlap, as DDP's ranks in one process could): a bounded look, whatever the number of backward() calls.
  auto it = std::upper_bound(backwards_.begin(), backwards_.end(), time_ns,
                             [](uint64_t t, const BackwardCall& b) { return t < b.start_ns; });
  for (int looked = 0; looked < 2 && it != backwards_.begin(); ++looked) {
    --it;
    if (time_ns < it->end_ns) return it->thread_id != thread_id ? &*it : nullptr;
  }
  return nullptr;
}

bool ProbeIndex::HasException(size_t window) const {
  return std::any_of(exceptions_.begin(), exceptions_.end(),
                     [&](const PythonException& e) { return e.window == window; });
}

const trace::CaptureBegin* ProbeIndex::Begin(size_t window) const {
  return window < window_begin_.size() ? window_begin_[window] : nullptr;
}

const trace::CaptureEnd* ProbeIndex::End(size_t window) const {
  const trace::CaptureBegin* begin = Begin(window);
  if (begin == nullptr) return nullptr;
  for (const trace::CaptureEnd& end : records_.capture_ends) {
    if (end.at.event > begin->at.event && end.graph == begin->graph) return &end;
  }
  return nullptr;
}

std::vector<Metric> ProbeMetrics(const trace::Trace& trace, const ProbeIndex& probe,
                                 const std::vector<CaptureWindow>& windows) {
  std::vector<Metric> metrics;
  std::set<uint64_t> compiled_graphs;                // CUDA graph ids of the windows cudagraph trees recorded
  std::set<std::pair<std::string, int>> call_sites;  // the program's frame (file, line) that made the call
  uint64_t recordings = 0;
  for (size_t w = 0; w < windows.size(); ++w) {
    if (probe.Origin(w) != trace::ProbeOrigin::kCudagraphTrees) continue;
    ++recordings;
    if (windows[w].end_call) compiled_graphs.insert(trace.Detail(trace.api_calls[*windows[w].end_call]).graph_id);
    const std::vector<SourceFrame> frames = trace::PythonFrames(trace, probe.Begin(w)->at.stack);
    if (const SourceFrame* site = FirstUserFrame(frames)) {
      call_sites.emplace(site->file, site->line);
    }
  }
  const uint64_t skips = probe.records().compile_skips.size();
  if (recordings == 0 && skips == 0) return metrics;
  uint64_t replays = 0;
  for (const trace::ApiCall& call : trace.api_calls) {
    replays += call.kind == trace::ApiKind::kGraphLaunch && compiled_graphs.count(trace.Detail(call).graph_id) != 0;
  }
  metrics.push_back(metric::kCompileRecordings.With(static_cast<double>(recordings)));
  metrics.push_back(metric::kCompileRecordingCallSites.With(static_cast<double>(call_sites.size())));
  metrics.push_back(metric::kCompileReplays.With(static_cast<double>(replays)));
  metrics.push_back(metric::kCompileCudagraphSkips.With(static_cast<double>(skips)));
  // How much of the GPU's work ran as torch.compile's graphs: their replays' GPU time over all GPU time recorded
  // (kernels launched one by one, and every graph's replays), from the activity inside launch-recording windows.
  if (recordings == 0) return metrics;
  // A replay's record carries its executable graph's id; the launch call (same correlation id) names the captured one.
  absl::flat_hash_map<uint32_t, uint64_t> launched_graph;  // correlation id -> captured graph id
  for (const trace::ApiCall& call : trace.api_calls) {
    if (call.kind == trace::ApiKind::kGraphLaunch) launched_graph[call.correlation_id] = trace.Detail(call).graph_id;
  }
  uint64_t compiled_ns = 0, gpu_ns = 0;
  for (const trace::GraphLaunchActivity& g : trace.graph_launches) {
    if (g.end_ns <= g.start_ns) continue;
    gpu_ns += g.end_ns - g.start_ns;
    auto it = launched_graph.find(g.correlation_id);
    if (it != launched_graph.end() && compiled_graphs.count(it->second) != 0) compiled_ns += g.end_ns - g.start_ns;
  }
  for (const trace::KernelActivity& k : trace.kernels) {
    if (k.graph_id == 0 && k.end_ns > k.start_ns) gpu_ns += k.end_ns - k.start_ns;
  }
  if (gpu_ns > 0) {
    metrics.push_back(metric::kCompileReplayGpuShare.With(static_cast<double>(compiled_ns) / gpu_ns));
  }
  return metrics;
}

std::vector<Metric> ShadowMetrics(const trace::Trace& trace) {
  std::vector<Metric> metrics;
  if (trace.shadow_comparisons.empty()) return metrics;
  // One call's (or replay's, or backward's) tensors share its time and draws: count them by (subject, owner, call).
  // A backward's two subjects, its gradients and their accumulation, are one backward.
  auto kind = [](trace::ShadowSubject s) {
    return s == trace::ShadowSubject::kGradAccumulation ? trace::ShadowSubject::kModuleBackward : s;
  };
  std::map<std::tuple<trace::ShadowSubject, uint64_t, uint32_t>, const trace::ShadowComparison*> calls;
  uint64_t tensors = 0;
  for (const trace::ShadowComparison& c : trace.shadow_comparisons) {
    auto [it, added] = calls.emplace(std::make_tuple(kind(c.subject), c.module, c.call), &c);
    if (!added && it->second->random && !c.random) it->second = &c;  // a backward's accumulation is always compared
    tensors += !c.random;
  }
  uint64_t module_calls = 0, replays = 0, backwards = 0, random = 0, drawing = 0;
  std::vector<uint64_t> costs;
  for (const auto& [key, c] : calls) {
    if (c->random) {
      ++random;
      continue;
    }
    const trace::ShadowSubject subject = std::get<0>(key);
    ++(subject == trace::ShadowSubject::kCapturedRegion   ? replays
       : subject == trace::ShadowSubject::kModuleBackward ? backwards
                                                          : module_calls);
    drawing += c->draws != 0 && !trace.String(c->draws).empty();
    costs.push_back(c->shadow_ns);
  }
  auto count = [&](const metric::Spec& spec, uint64_t value) {
    if (value > 0) metrics.push_back(spec.With(static_cast<double>(value)));
  };
  count(metric::kShadowCallsCompared, module_calls);
  count(metric::kShadowReplaysCompared, replays);
  count(metric::kShadowBackwardsCompared, backwards);
  count(metric::kShadowCallsDrawing, drawing);
  count(metric::kShadowCallsRandom, random);
  count(metric::kShadowTensorsCompared, tensors);
  if (costs.empty()) return metrics;
  // The median: a process's first comparison also loads the comparison's kernels (about a second on an H100).
  std::nth_element(costs.begin(), costs.begin() + costs.size() / 2, costs.end());
  metrics.push_back(metric::kShadowCostUs.With(costs[costs.size() / 2] / 1e3));
  return metrics;
}

std::vector<TimeInterval> AuditSpans(const trace::ProbeRecords& records) {
  std::vector<TimeInterval> spans;
  std::map<uint32_t, uint64_t> open;  // thread -> its audit's begin
  for (const trace::ProbeMark& mark : records.audits) {
    if (mark.begin) {
      open.emplace(mark.at.thread_id, mark.at.time_ns);
    } else if (auto it = open.find(mark.at.thread_id); it != open.end()) {
      spans.push_back({it->second, mark.at.time_ns, mark.at.thread_id});
      open.erase(it);
    }
  }
  for (const auto& [thread, start] : open) spans.push_back({start, ~uint64_t{0}, thread});
  std::sort(spans.begin(), spans.end(),
            [](const TimeInterval& a, const TimeInterval& b) { return a.start_ns < b.start_ns; });
  return spans;
}

std::optional<uint64_t> ProgramPoolOf(const ProbeIndex& probe, size_t window) {
  const trace::ProbeOrigin origin = probe.Origin(window);
  if (IsGraphMachinery(origin) || origin == trace::ProbeOrigin::kCudagraphTrees) return std::nullopt;
  const trace::CaptureEnd* end = probe.End(window);
  if (end == nullptr || end->pool == 0) return std::nullopt;
  return end->pool;
}

std::optional<uint64_t> BytesLeftAllocated(const ProbeIndex& probe, size_t window) {
  const trace::CaptureEnd* end = probe.End(window);
  // Before format 1.5, or when torch could not say, the counts are 0.
  if (end == nullptr || end->allocated_at_end == 0 || end->allocated_at_begin == 0) return std::nullopt;
  return end->allocated_at_end > end->allocated_at_begin ? end->allocated_at_end - end->allocated_at_begin : 0;
}

Location ProbeEventLocation(const trace::Trace& trace, const trace::ProbeHeader& at) {
  Location where;
  where.python = trace::PythonFrames(trace, at.stack);
  where.thread_id = at.thread_id;
  if (trace.process.pid != 0) where.pid = trace.process.pid;
  return where;
}

void AddLibraryAdvice(Finding* finding) {
  const trace::LibrarySite library = trace::ThirdPartySite(finding->where.python);
  if (library.package.empty()) return;
  const SourceFrame* program = FirstUserFrame(finding->where);
  const bool named = std::any_of(finding->evidence.begin(), finding->evidence.end(),
                                 [&](const std::string& line) { return absl::StrContains(line, library.where); });
  if (!named) {  // an exception's "raised in ..." line already says it
    finding->evidence.push_back(absl::StrCat("inside ", library.where, program != nullptr ? ", called from " : "",
                                             program != nullptr ? trace::ProgramSite(finding->where.python) : ""));
  }
  // What to change in a library's own settings, by the library and the file of its frames that did it.
  struct Advice {
    absl::string_view package;
    absl::string_view file;  // a part of the frame's file name; empty: any
    absl::string_view option;
  };
  static constexpr Advice kAdvice[] = {
      {"transformers", "",
       "For a Hugging Face model: load it with attn_implementation=\"sdpa\" and pass no attention mask (or one built "
       "once, outside the graphed module), so that no mask is built inside the capture; "},
      {"megatron", "rerun_state_machine",
       "This is Megatron's NaN check of the loss (the rerun state machine's validate_result reads its verdict on the "
       "host): turn it off for full-iteration graphs (--no-check-for-nan-in-loss-and-grad, "
       "rerun_state_machine.check_for_nan_in_loss=False), as Megatron Bridge requires; "},
  };
  std::string option;
  for (const Advice& advice : kAdvice) {
    if (advice.package != library.package) continue;
    if (advice.file.empty() ||
        std::any_of(finding->where.python.begin(), finding->where.python.end(),
                    [&](const SourceFrame& f) { return absl::StrContains(f.file, advice.file); })) {
      option = std::string(advice.option);
      break;
    }
  }
  absl::StrAppend(&finding->fix, " It happens inside ", library.package, ", not in the program's own code. ", option,
                  "graph a smaller region that leaves this call eager, or use a version of ", library.package,
                  " that avoids it.");
}

std::string DescribeOrigin(trace::ProbeOrigin origin) {
  switch (origin) {
    case trace::ProbeOrigin::kUser:
      return "the program";
    case trace::ProbeOrigin::kGraphedCallables:
      return "torch.cuda.make_graphed_callables";
    case trace::ProbeOrigin::kCudagraphTrees:
      return "torch.compile's CUDA graphs (cudagraph trees)";
    case trace::ProbeOrigin::kCudagraphTreesInit:
      return "torch.compile's cudagraph trees, creating their memory pool";
    case trace::ProbeOrigin::kTransformerEngine:
      return "Transformer Engine's make_graphed_callables";
    case trace::ProbeOrigin::kMegatron:
      return "Megatron Core's CUDA graph manager";
    case trace::ProbeOrigin::kMegatronFullIteration:
      return "Megatron Core's full-iteration CUDA graph (FullCudaGraphWrapper)";
    case trace::ProbeOrigin::kUnknown:
      break;
  }
  return "an unknown caller";
}

std::string LibraryGraphName(const trace::CaptureBegin& capture_begin) {
  switch (capture_begin.at.origin) {
    case trace::ProbeOrigin::kMegatron:
      return capture_begin.megatron_layer == 0
                 ? absl::StrCat("Megatron's ", capture_begin.megatron_part, " layer graph")
                 : absl::StrCat("Megatron's layer ", capture_begin.megatron_layer, " ", capture_begin.megatron_part,
                                " graph");
    case trace::ProbeOrigin::kMegatronFullIteration:
      return absl::StrCat("Megatron's full-iteration ", capture_begin.megatron_part, " graph");
    default:
      return "";
  }
}

bool HoldsActivationsForBackward(trace::ProbeOrigin origin) {
  return origin == trace::ProbeOrigin::kGraphedCallables || origin == trace::ProbeOrigin::kTransformerEngine ||
         origin == trace::ProbeOrigin::kMegatron;
}

bool IsGraphMachinery(trace::ProbeOrigin origin) { return origin == trace::ProbeOrigin::kCudagraphTreesInit; }

std::vector<std::string> ExceptionDetails(absl::string_view text) {
  std::vector<std::string> details;
  std::vector<absl::string_view> lines = absl::StrSplit(text, '\n');
  for (size_t i = 1; i < lines.size() && details.size() < kQuotedExceptionLines; ++i) {
    const absl::string_view line = absl::StripAsciiWhitespace(lines[i]);
    if (line.empty()) continue;
    details.push_back(
        absl::StrCat(line.substr(0, kQuotedExceptionBytes), line.size() > kQuotedExceptionBytes ? " ..." : ""));
  }
  if (details.size() == kQuotedExceptionLines) details.back() = "...";
  return details;
}

std::string ExceptionText(const trace::PythonExceptionRecord& exception) {
  const absl::string_view text = exception.message;
  const absl::string_view first_line = text.substr(0, text.find('\n'));
  const bool cut = first_line.size() > kQuotedExceptionBytes || first_line.size() < text.size();
  return absl::StrCat(exception.type, ": ", first_line.substr(0, kQuotedExceptionBytes), cut ? " ..." : "");
}

}  // namespace graphcheck::analysis
