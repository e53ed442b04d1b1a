// recapture-churn: the same region captured again and again while its graphs are being replayed (a capture per step,
// or torch.compile re-recording for every new input shape). Captures of one region are grouped by the Python line that
// began them (or called the function torch.compile's cudagraph trees recorded), else by the backtrace of their begin
// call, else by their kernel sequence. A group is churn when at least `min-captures` of its captures were superseded:
// replays happened before the region's next capture, and the graph was never launched again after it. So per-layer
// captures made up front (Transformer Engine, Megatron) are not churn, and neither is one graph per bucket captured
// lazily as each bucket first comes (every bucket's graph is replayed again after the next bucket's capture); a
// capture per step, or a new recording for each new shape that leaves the last one unused, is. Cudagraph trees'
// pool-creating empty capture is not a region.
#include <algorithm>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "checks/checks.h"
#include "checks/trace/internal/capture_problem_check.h"
#include "core/check_ids.h"
#include "core/plural.h"
#include "trace/python_frames.h"

namespace graphcheck::checks {

using analysis::CaptureWindow;
using analysis::IsGraphMachinery;
using analysis::ProbeIndex;
using analysis::TraceAnalysis;

namespace {

// How many graph launches came before each capture began, in one pass.
std::vector<uint64_t> ReplaysBeforeEachCapture(const trace::Trace& trace, const std::vector<CaptureWindow>& windows) {
  std::vector<uint64_t> replays_before(windows.size());
  uint64_t replays = 0;
  for (size_t i = 0, w = 0; i < trace.api_calls.size() && w < windows.size(); ++i) {
    while (w < windows.size() && windows[w].begin_call == i) replays_before[w++] = replays;
    replays += trace.api_calls[i].kind == trace::ApiKind::kGraphLaunch;
  }
  return replays_before;
}

// The index of each graph's last launch call, by CUPTI's graph id.
absl::flat_hash_map<uint64_t, size_t> LastLaunchOfEachGraph(const trace::Trace& trace) {
  absl::flat_hash_map<uint64_t, size_t> last;
  for (size_t i = 0; i < trace.api_calls.size(); ++i) {
    if (trace.api_calls[i].kind != trace::ApiKind::kGraphLaunch) continue;
    if (const uint64_t graph = trace.Detail(trace.api_calls[i]).graph_id) last[graph] = i;
  }
  return last;
}

// Whether the graph `window` captured was launched after call `call`. A capture whose graph the trace cannot name
// (it never ended, or the recorder saw no id) counts as not launched.
bool LaunchedAfter(const trace::Trace& trace, const CaptureWindow& window,
                   const absl::flat_hash_map<uint64_t, size_t>& last_launch, size_t call) {
  if (!window.end_call) return false;
  const uint64_t graph = trace.Detail(trace.api_calls[*window.end_call]).graph_id;
  auto it = graph != 0 ? last_launch.find(graph) : last_launch.end();
  return it != last_launch.end() && it->second > call;
}

class RecaptureChurnCheck : public CheckOf<TraceAnalysis> {
 public:
  RecaptureChurnCheck()
      : CheckOf(CheckInfo{
            check_id::kRecaptureChurn,
            "The same region is captured again and again",
            Severity::kWarning,
            CheckArea::kCapture,
            "One region was captured many times with replays in between, each new graph taking the last one's place: "
            "each capture costs far more than the launches it saves. Shapes that change between steps (dynamic shapes) "
            "are the usual cause.",
            {{"min-captures", "3",
              "captures of one region that count as churn, all but the last superseded (replays before the next "
              "capture, none after it)",
              2, 1e9}}}) {}

 protected:
  void Read(const TraceAnalysis& analysis, const BoundOptions& options, std::vector<Finding>* findings) const override {
    const trace::Trace& trace = analysis.trace();
    const std::vector<CaptureWindow>& windows = analysis.captures().windows();
    if (windows.empty()) return;
    const ProbeIndex& probe = analysis.probe();
    struct Group {
      bool compiled = false;  // recorded by torch.compile's cudagraph trees
      std::vector<size_t> windows;
      size_t superseded = 0;  // captures whose graph was never launched after the group's next capture
      absl::flat_hash_set<uint64_t> shapes;
      uint64_t capture_ns = 0;
    };
    const std::vector<uint64_t> replays_before = ReplaysBeforeEachCapture(trace, windows);
    std::optional<absl::flat_hash_map<uint64_t, size_t>> last_launch;  // made for the first group that may churn
    absl::flat_hash_map<uint64_t, size_t> group_of_key;
    std::vector<Group> groups;
    for (size_t w = 0; w < windows.size(); ++w) {
      const CaptureWindow& window = windows[w];
      if (IsGraphMachinery(probe.Origin(w))) continue;
      const trace::CaptureBegin* begin = probe.Begin(w);
      const bool compiled = probe.Origin(w) == trace::ProbeOrigin::kCudagraphTrees;
      // A Python program's captures are regions by the program's line that began them (PyTorch begins every capture
      // from the same C++ code, so the host backtrace cannot tell them apart): the probe's begin event's stack, else
      // the Python stack the recorder took on the begin call. Cudagraph trees give each shape of a dynamic function
      // its own function id: their recordings are one region by the program's call site too.
      const trace::PythonStackId stack =
          begin != nullptr ? begin->at.stack : trace.Detail(trace.api_calls[window.begin_call]).python_stack;
      const std::vector<SourceFrame> frames = trace::PythonFrames(trace, stack);
      const SourceFrame* call_site = FirstUserFrame(frames);
      const trace::Backtrace* backtrace =
          trace.FindBacktrace(trace.Detail(trace.api_calls[window.begin_call]).backtrace);
      const uint64_t key = call_site != nullptr   ? absl::HashOf(3, call_site->file, call_site->line)
                           : compiled             ? absl::HashOf(4, begin->compiled_function)
                           : backtrace != nullptr ? absl::HashOf(1, backtrace->frames)
                                                  : absl::HashOf(2, window.kernel_sequence);
      auto [it, inserted] = group_of_key.try_emplace(key, groups.size());
      if (inserted) groups.emplace_back();
      Group& group = groups[it->second];
      group.compiled = compiled;
      group.windows.push_back(w);
      group.shapes.insert(window.kernel_shapes);
      if (window.end_call) {
        group.capture_ns += trace.api_calls[*window.end_call].end_ns - trace.api_calls[window.begin_call].start_ns;
      }
    }
    const double min_captures = options.GetDouble("min-captures");
    for (Group& group : groups) {
      const size_t first = group.windows.front();
      const size_t last = group.windows.back();
      if (group.windows.size() < min_captures || replays_before[last] == replays_before[first]) continue;
      if (!last_launch) last_launch = LastLaunchOfEachGraph(trace);
      for (size_t i = 0; i + 1 < group.windows.size(); ++i) {
        const CaptureWindow& next = windows[group.windows[i + 1]];
        group.superseded += replays_before[group.windows[i + 1]] > replays_before[group.windows[i]] &&
                            !LaunchedAfter(trace, windows[group.windows[i]], *last_launch, next.begin_call);
      }
      if (group.superseded + 1 < min_captures) continue;
      Finding finding = NewFinding();
      finding.where = analysis.Locate(windows[first].begin_call);
      if (const trace::CaptureBegin* begin = probe.Begin(first)) {
        finding.where.python = trace::PythonFrames(trace, begin->at.stack);
      }
      finding.message =
          group.compiled
              ? absl::StrCat("torch.compile's CUDA graphs (cudagraph trees) recorded the function called here ",
                             group.windows.size(),
                             " times, with graph replays in between: each new input shape (or a changed "
                             "guard) records a new graph instead of replaying one.")
              : absl::StrCat("The same region was captured ", group.windows.size(),
                             " times, with graph replays in between: it is recaptured instead of replayed.");
      finding.evidence.push_back(absl::StrCat(replays_before[last] - replays_before[first],
                                              " graph launches between the first and the last capture"));
      finding.evidence.push_back(absl::StrCat(group.superseded, " of the ",
                                              Plural(group.windows.size(), "graph", "graphs"),
                                              " never launched again once the region was captured anew"));
      finding.evidence.push_back(absl::StrFormat("%.3f ms spent capturing", group.capture_ns / 1e6));
      if (group.shapes.size() > 1) {
        finding.evidence.push_back(absl::StrCat(group.shapes.size(),
                                                " different kernel sequences or launch sizes: the captured shapes "
                                                "change (dynamic shapes)"));
      }
      finding.fix =
          group.compiled
              ? "Give the compiled function a few fixed shapes: pad or bucket the varying dimension (batch, sequence "
                "length) to a handful of sizes; torch._dynamo.mark_dynamic on that dimension, or "
                "torch._inductor.config.triton.cudagraph_skip_dynamic_graphs=True, trade the re-recordings for eager "
                "runs of the dynamic shapes."
              : "Capture once and replay: keep inputs in static tensors and copy new data into them; pad or bucket "
                "variable shapes to a few sizes and keep one graph per bucket; with "
                "torch.compile(mode='reduce-overhead') mark dynamic dimensions or set "
                "torch._inductor.config.triton.cudagraph_skip_dynamic_graphs=True.";
      findings->push_back(std::move(finding));
    }
  }
};

}  // namespace

std::unique_ptr<Check> NewRecaptureChurnCheck() { return std::make_unique<RecaptureChurnCheck>(); }

}  // namespace graphcheck::checks
