#include "analysis/iterations.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analysis/python_probe.h"
#include "core/plural.h"
#include "trace/captured_nodes.h"

namespace graphcheck::analysis {
namespace {

using trace::ApiCall;
using trace::ApiKind;

constexpr uint32_t kMinRepeats = 3;  // an anchor seen 3 times bounds 2 whole steps

bool IsEagerLaunch(const trace::Trace& trace, const ApiCall& call) {
  return call.kind == ApiKind::kKernelLaunch && call.capture_status == trace::CaptureStatus::kNone &&
         trace.Detail(call).return_code == 0;
}
bool IsReplay(const trace::Trace& trace, const ApiCall& call) {
  return call.kind == ApiKind::kGraphLaunch && call.capture_status == trace::CaptureStatus::kNone &&
         trace.Detail(call).return_code == 0;
}

// Dense keys of a sequence: how often each was seen and where first.
struct KeyCounts {
  std::vector<uint32_t> count;
  std::vector<size_t> first_seen;

  void Add(uint32_t key, size_t position) {
    if (key >= count.size()) {
      count.resize(key + 1, 0);
      first_seen.resize(key + 1, std::numeric_limits<size_t>::max());
    }
    if (count[key]++ == 0) first_seen[key] = position;
  }

  // The key that marks step starts: among the keys seen as often as the most keys are (ties: the larger count), the
  // first seen.
  std::optional<uint32_t> Anchor() const {
    absl::flat_hash_map<uint32_t, uint32_t> keys_per_count;
    for (uint32_t c : count) {
      if (c >= kMinRepeats) ++keys_per_count[c];
    }
    uint32_t best_count = 0;
    uint32_t best_keys = 0;
    for (const auto& [c, keys] : keys_per_count) {
      if (keys > best_keys || (keys == best_keys && c > best_count)) {
        best_count = c;
        best_keys = keys;
      }
    }
    std::optional<uint32_t> anchor;
    for (uint32_t key = 0; key < count.size(); ++key) {
      if (count[key] == best_count && best_count > 0 && (!anchor || first_seen[key] < first_seen[*anchor])) {
        anchor = key;
      }
    }
    return anchor;
  }
};

size_t FirstCallAtOrAfter(const trace::Trace& trace, uint64_t time_ns) {
  return std::lower_bound(trace.api_calls.begin(), trace.api_calls.end(), time_ns,
                          [](const ApiCall& call, uint64_t t) { return call.start_ns < t; }) -
         trace.api_calls.begin();
}

// Steps anchored on the launches in [from, to) that `key_of` gives a key; returns the anchor's description.
template <typename KeyOf>
std::string StepsByRepetition(const trace::Trace& trace, size_t from, size_t to, KeyOf key_of,
                              std::vector<Iteration>* steps) {
  KeyCounts counts;
  for (size_t i = from; i < to; ++i) {
    if (std::optional<uint32_t> key = key_of(trace.api_calls[i])) counts.Add(*key, i);
  }
  const std::optional<uint32_t> anchor = counts.Anchor();
  if (!anchor) return "";
  std::optional<size_t> previous;
  for (size_t i = counts.first_seen[*anchor]; i < to; ++i) {
    if (key_of(trace.api_calls[i]) != anchor) continue;
    if (previous)
      steps->push_back(MakeIteration(trace, trace.api_calls[*previous].start_ns, trace.api_calls[i].start_ns));
    previous = i;
  }
  return Plural(counts.count[*anchor] - 1, "step", "steps");
}

// A repeated unit of one launch is a loop body, not a step (a C++ loop of one kernel): such units are grouped so that
// each step holds kGroupedStepLaunches launches, the size of graph a user would capture; a graph per launch would pay
// its own launch cost for nothing.
constexpr size_t kShortStepLaunches = 2;
constexpr size_t kGroupedStepLaunches = 32;

// Groups consecutive short steps (see above); returns the group size, 1 when the steps are left alone.
size_t GroupShortSteps(const trace::Trace& trace, std::vector<Iteration>* steps) {
  if (steps->empty()) return 1;
  std::vector<size_t> launches;
  for (const Iteration& step : *steps) {
    size_t count = 0;
    for (size_t i = step.first_call; i < step.end_call; ++i) count += IsEagerLaunch(trace, trace.api_calls[i]) ? 1 : 0;
    launches.push_back(count);
  }
  const auto middle = launches.begin() + static_cast<std::ptrdiff_t>(launches.size() / 2);
  std::nth_element(launches.begin(), middle, launches.end());
  const size_t median = std::max<size_t>(*middle, 1);
  if (median >= kShortStepLaunches) return 1;
  const size_t group = (kGroupedStepLaunches + median - 1) / median;
  std::vector<Iteration> grouped;
  for (size_t first = 0; first + group <= steps->size(); first += group) {
    grouped.push_back(MakeIteration(trace, (*steps)[first].start_ns, (*steps)[first + group - 1].end_ns));
  }
  *steps = std::move(grouped);
  return group;
}

// Where repetition may look for steps: the whole trace, or each sampling window (steps must not span the gaps).
std::vector<std::pair<size_t, size_t>> RecordedCallRanges(const trace::Trace& trace) {
  if (trace.recorder.launches != trace::LaunchRecording::kSampled) return {{0, trace.api_calls.size()}};
  std::vector<std::pair<size_t, size_t>> ranges;
  for (const trace::LaunchWindow& window : trace.launch_windows) {
    ranges.emplace_back(FirstCallAtOrAfter(trace, window.start_ns), FirstCallAtOrAfter(trace, window.end_ns));
  }
  return ranges;
}

void Select(const IterationOptions& options, std::vector<Iteration>* steps) {
  std::vector<Iteration> selected;
  for (size_t i = 0; i < steps->size(); ++i) {
    (*steps)[i].index = i;
    if (i >= options.first && (!options.last || i < *options.last)) selected.push_back((*steps)[i]);
  }
  *steps = std::move(selected);
}

}  // namespace

Iteration MakeIteration(const trace::Trace& trace, uint64_t start_ns, uint64_t end_ns) {
  Iteration it;
  it.start_ns = start_ns;
  it.end_ns = end_ns;
  it.first_call = FirstCallAtOrAfter(trace, start_ns);
  it.end_call = FirstCallAtOrAfter(trace, end_ns);
  return it;
}

std::string IterationOptions::Key() const {
  return absl::StrCat(region, "\x1f", first, ":", last ? absl::StrCat(*last) : "");
}

absl::Status ParseStepRange(absl::string_view text, IterationOptions* options) {
  const size_t colon = text.find(':');
  absl::string_view a = text.substr(0, colon);
  absl::string_view b = colon == absl::string_view::npos ? absl::string_view() : text.substr(colon + 1);
  size_t first = 0;
  size_t last = 0;
  if ((!a.empty() && !absl::SimpleAtoi(a, &first)) || (!b.empty() && !absl::SimpleAtoi(b, &last)) ||
      (colon != absl::string_view::npos && !b.empty() && last <= first) || text.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("step range '", text, "' is not FIRST:LAST, FIRST:, :LAST or STEP (0-based, LAST excluded)"));
  }
  options->first = first;
  if (colon == absl::string_view::npos) {
    options->last = first + 1;
  } else if (!b.empty()) {
    options->last = last;
  } else {
    options->last.reset();
  }
  return absl::OkStatus();
}

namespace {

// Graph replays from call `from` on, cut by repetition of the launched graphs; graph ids (handles) get dense keys in
// order of first launch. Returns the description of what was found, "" when nothing repeats.
std::string GraphedStepsByRepetition(const trace::Trace& trace, size_t from, std::vector<Iteration>* graphed) {
  absl::flat_hash_map<uint64_t, uint32_t> graph_keys;
  std::string found = StepsByRepetition(
      trace, from, trace.api_calls.size(),
      [&](const ApiCall& call) {
        if (!IsReplay(trace, call)) return std::optional<uint32_t>();
        const uint64_t graph = trace.Detail(call).graph_id;
        return std::optional<uint32_t>(graph_keys.try_emplace(graph, graph_keys.size()).first->second);
      },
      graphed);
  for (Iteration& it : *graphed) it.graphed = true;
  return found;
}

// Marks the steps that replay a graph (one scan of each step's calls).
void MarkGraphed(const trace::Trace& trace, std::vector<Iteration>* steps) {
  for (Iteration& step : *steps) {
    for (size_t i = step.first_call; i < step.end_call && !step.graphed; ++i) {
      step.graphed = IsReplay(trace, trace.api_calls[i]);
    }
  }
}

// The kernels each captured graph holds, by name.
using KernelCounts = absl::flat_hash_map<trace::StringId, size_t>;
absl::flat_hash_map<uint64_t, KernelCounts> CapturedKernels(const trace::Trace& trace) {
  absl::flat_hash_map<uint64_t, KernelCounts> by_graph;
  for (const auto& [graph, calls] : trace::KernelLaunchesByGraph(trace)) {
    KernelCounts& counts = by_graph[graph];
    for (size_t call : calls) ++counts[trace.Detail(trace.api_calls[call]).kernel_name];
  }
  return by_graph;
}

// Whether a graphed step also launches, one by one, at least half of the kernels of the graphs it replays: the
// program's own eager reference beside the replay (to compare the two), not partial graphing (an eager optimizer
// beside a graphed module launches other kernels). Timing such a step as graphed compares two runs of the work with
// one (issue 46: a 20-step evaluation loop's "graphed" step took 228.7 us against 65.0 us eager).
constexpr size_t kMinRerunKernels = 4;
bool RerunsItsGraphsEagerly(const trace::Trace& trace, const Iteration& step,
                            const absl::flat_hash_map<uint64_t, KernelCounts>& captured) {
  KernelCounts graphs;
  KernelCounts eager;
  for (size_t i = step.first_call; i < step.end_call; ++i) {
    const ApiCall& call = trace.api_calls[i];
    if (IsReplay(trace, call)) {
      if (auto it = captured.find(trace.Detail(call).graph_id); it != captured.end()) {
        for (const auto& [name, count] : it->second) graphs[name] += count;
      }
    } else if (IsEagerLaunch(trace, call)) {
      ++eager[trace.Detail(call).kernel_name];
    }
  }
  size_t in_graphs = 0;
  size_t rerun = 0;
  for (const auto& [name, count] : graphs) {
    in_graphs += count;
    if (auto it = eager.find(name); it != eager.end()) rerun += std::min(count, it->second);
  }
  return in_graphs >= kMinRerunKernels && 2 * rerun >= in_graphs;
}

// Steps that replay graphs beside their eager launches (partial graphing; MarkGraphed) are graphed steps; those that
// also rerun their graphs' kernels eagerly are neither (counted in `result->reruns`, their spans added to `reruns`).
void SortByReplay(const trace::Trace& trace, std::vector<Iteration> steps, Iterations* result,
                  std::vector<TimeInterval>* reruns) {
  std::optional<absl::flat_hash_map<uint64_t, KernelCounts>> captured;
  for (Iteration& it : steps) {
    if (it.graphed) {
      if (!captured) captured = CapturedKernels(trace);
      if (RerunsItsGraphsEagerly(trace, it, *captured)) {
        ++result->reruns;
        reruns->push_back({it.start_ns, it.end_ns, 0});
        continue;
      }
    }
    (it.graphed ? result->graphed : result->eager).push_back(it);
  }
}

}  // namespace

namespace {

// Whether `time_ns` falls inside one of `spans` (sorted by start, disjoint per thread).
bool InSpans(const std::vector<TimeInterval>& spans, uint64_t time_ns) {
  auto after = std::upper_bound(spans.begin(), spans.end(), time_ns,
                                [](uint64_t t, const TimeInterval& s) { return t < s.start_ns; });
  for (auto it = spans.begin(); it != after; ++it) {
    if (time_ns < it->end_ns) return true;
  }
  return false;
}

// Drops the steps that overlap one of `spans`.
void DropOverlapping(const std::vector<TimeInterval>& spans, std::vector<Iteration>* steps) {
  if (spans.empty()) return;
  steps->erase(std::remove_if(steps->begin(), steps->end(),
                              [&](const Iteration& step) {
                                return std::any_of(spans.begin(), spans.end(), [&](const TimeInterval& s) {
                                  return s.start_ns < step.end_ns && step.start_ns < s.end_ns;
                                });
                              }),
               steps->end());
}

// The capture iterations (a step during which a capture ran) are neither eager nor graphed steps; and when the
// program then replays graphs, a short run of eager steps before its first capture (fewer than kWarmupSteps: the
// recipes' 3 or 11 warmup iterations) is the capture's warmup, whose first-call work is not the program's eager step.
constexpr size_t kWarmupSteps = 12;

// Each capture's span: begin to end on one thread; open until its end call.
std::vector<TimeInterval> CaptureSpans(const trace::Trace& trace) {
  std::vector<TimeInterval> captures;
  absl::flat_hash_map<uint32_t, size_t> open;    // thread -> its open capture
  for (const ApiCall& call : trace.api_calls) {  // sorted by start
    if (call.kind == ApiKind::kCaptureBegin) {
      open[call.thread_id] = captures.size();
      captures.push_back({call.start_ns, ~uint64_t{0}, call.thread_id});
    } else if (call.kind == ApiKind::kCaptureEnd) {
      if (auto it = open.find(call.thread_id); it != open.end()) {
        captures[it->second].end_ns = call.end_ns;
        open.erase(it);
      }
    }
  }
  return captures;
}

void DropCaptureIterations(const std::vector<TimeInterval>& captures, Iterations* result) {
  if (captures.empty()) return;
  const uint64_t first_capture = captures.front().start_ns;
  DropOverlapping(captures, &result->eager);
  DropOverlapping(captures, &result->graphed);
  if (result->graphed.empty()) return;
  auto warmup = [&](const Iteration& step) { return step.end_ns <= first_capture; };
  const size_t before = std::count_if(result->eager.begin(), result->eager.end(), warmup);
  if (before > 0 && before < kWarmupSteps) {
    result->eager.erase(std::remove_if(result->eager.begin(), result->eager.end(), warmup), result->eager.end());
  }
}

}  // namespace

namespace {

// Steps cut by the NVTX range `region` (`automatic`: the program's most repeated outermost range, not --region).
void StepsFromNvtxRanges(const trace::Trace& trace, const NvtxIndex& nvtx, const std::string& region, bool automatic,
                         Iterations* out) {
  Iterations& result = *out;
  std::vector<Iteration> steps;
  // Steps do not overlap: a range that begins before the last step ends (another thread's range of the same name, or
  // a damaged trace's duplicated records) is no step of its own. Overlapping steps would count their calls again,
  // each (a trace whose chunks were duplicated 160 times took 1.1 GB and 22 s to analyze).
  uint64_t last_end = 0;
  for (const TimeInterval& range : nvtx.RangesNamed(region)) {
    if (!steps.empty() && range.start_ns < last_end) continue;
    steps.push_back(MakeIteration(trace, range.start_ns, range.end_ns));
    last_end = range.end_ns;
  }
  const size_t from = steps.empty() ? 0 : steps.back().end_call;
  std::vector<TimeInterval> reruns;
  MarkGraphed(trace, &steps);
  SortByReplay(trace, std::move(steps), &result, &reruns);
  // A program that marks only its eager steps: its replays after them are still graphed steps.
  std::string graphed;
  if (automatic && result.graphed.empty()) graphed = GraphedStepsByRepetition(trace, from, &result.graphed);
  if (!result.eager.empty() || !result.graphed.empty()) {
    result.source =
        absl::StrCat("NVTX range '", region, "'", automatic ? " (repeated)" : "", " (", result.eager.size(), " eager, ",
                     graphed.empty() ? absl::StrCat(result.graphed.size()) : graphed, " graphed)");
  }
}

void StepsByLaunchRepetition(const trace::Trace& trace, const std::vector<TimeInterval>& audits,
                             const std::vector<TimeInterval>& captures, Iterations* out);

// Steps cut where the program's own loop comes round (the probe's program-step marks, python/probe/graphcheck_probe/
// steps.py): within each phase, from one mark to the next (the last mark's pass is left out: where it ends is not
// known), so set-up, an evaluation between epochs and teardown are in no step. Phases are kept apart: the eager steps
// are those of the one loop (over every call of its function) with the most, and likewise the graphed steps (steps
// that replay graphs beside eager work); another eager loop with fewer passes (a warm-up loop) gives no step. A
// program whose graphed loop replays a whole-step graph makes no marks there: its replays outside every phase are cut
// by repetition. The marks at optimizer steps cut a training program's steps; the marks at replays, which the probe
// sends until the first optimizer step, only those of a program whose optimizer steps cut none (a serving, decoding
// or evaluation loop): its eager steps (an eager twin's loop) are then found by repetition outside the replays' loops
// (`audits`, `captures`: as StepsByLaunchRepetition takes them). False when no loop came round kMinRepeats times.
bool StepsFromProgramLoops(const trace::Trace& trace, const std::vector<trace::ProgramStep>& marks,
                           const std::vector<TimeInterval>& audits, const std::vector<TimeInterval>& captures,
                           Iterations* out) {
  using Phases = std::map<uint64_t, std::vector<const trace::ProgramStep*>>;
  auto phases_of = [&](trace::StepAnchor anchor) {
    Phases found;
    for (const trace::ProgramStep& mark : marks) {
      if (mark.anchor == anchor) found[mark.phase].push_back(&mark);
    }
    for (auto it = found.begin(); it != found.end();) it = it->second.size() < kMinRepeats ? found.erase(it) : ++it;
    return found;
  };
  Phases phases = phases_of(trace::StepAnchor::kOptimizerStep);
  const bool at_replays = phases.empty();
  if (at_replays) phases = phases_of(trace::StepAnchor::kReplay);
  std::vector<Iteration> steps;
  std::vector<absl::string_view> loop_of_step;
  std::vector<TimeInterval> spans;  // each phase's first mark to its last
  for (const auto& [phase, phase_marks] : phases) {
    spans.push_back({phase_marks.front()->at.time_ns, phase_marks.back()->at.time_ns, 0});
    for (size_t i = 1; i < phase_marks.size(); ++i) {
      steps.push_back(MakeIteration(trace, phase_marks[i - 1]->at.time_ns, phase_marks[i]->at.time_ns));
      loop_of_step.push_back(phase_marks[i]->loop);
    }
  }
  if (steps.empty()) return false;
  MarkGraphed(trace, &steps);
  // The loop with the most steps of each kind.
  auto busiest = [&](bool graphed) {
    std::map<absl::string_view, size_t> count;
    for (size_t s = 0; s < steps.size(); ++s) count[loop_of_step[s]] += steps[s].graphed == graphed ? 1 : 0;
    auto best =
        std::max_element(count.begin(), count.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
    return best->second > 0 ? best->first : absl::string_view();
  };
  const absl::string_view eager_loop = busiest(false);
  const absl::string_view graphed_loop = busiest(true);
  std::vector<Iteration> kept;
  for (size_t s = 0; s < steps.size(); ++s) {
    if (loop_of_step[s] == (steps[s].graphed ? graphed_loop : eager_loop)) kept.push_back(steps[s]);
  }
  Iterations& result = *out;
  std::vector<TimeInterval> reruns;
  SortByReplay(trace, std::move(kept), &result, &reruns);
  std::string graphed;
  if (!result.graphed.empty()) {
    graphed = absl::StrCat(Plural(result.graphed.size(), "graphed step", "graphed steps"), " at ", graphed_loop);
  } else {
    GraphedStepsByRepetition(trace, 0, &result.graphed);
    DropOverlapping(spans, &result.graphed);
    graphed = result.graphed.empty() ? "no graphed step"
                                     : absl::StrCat(Plural(result.graphed.size(), "graphed step", "graphed steps"),
                                                    " cut from the replays");
  }
  std::string eager_at = result.eager.empty() ? "" : absl::StrCat(" at ", eager_loop);
  if (at_replays && result.eager.empty()) {
    Iterations repeated;
    StepsByLaunchRepetition(trace, audits, captures, &repeated);
    result.eager = std::move(repeated.eager);
    DropOverlapping(spans, &result.eager);
    result.eager_by_repetition = true;
    eager_at = " by repetition";
  }
  result.source = absl::StrCat("the program's loop", at_replays ? ", at its replays" : "", " (",
                               Plural(result.eager.size(), "eager step", "eager steps"),
                               result.eager.empty() ? "" : eager_at, "; ", graphed, ")");
  return true;
}

// Steps found by repetition of the eager launch sequence (outside the probe's `audits`), and graphed steps by
// repetition of the replays.
void StepsByLaunchRepetition(const trace::Trace& trace, const std::vector<TimeInterval>& audits,
                             const std::vector<TimeInterval>& captures, Iterations* out) {
  Iterations& result = *out;
  std::vector<Iteration> steps;
  std::string eager;
  size_t from = 0;
  size_t ranges_with_steps = 0;
  for (const auto& [begin, end] : RecordedCallRanges(trace)) {
    std::vector<Iteration> found;
    std::string description = StepsByRepetition(
        trace, begin, end,
        [&](const ApiCall& call) {
          if (!IsEagerLaunch(trace, call) || InSpans(audits, call.start_ns)) return std::optional<uint32_t>();
          // Keys index a table as large as the largest key: a damaged record's string id beyond the string table
          // counts as the unknown name, so it cannot make the table 2^32 entries long (found by the fuzzer).
          const trace::StringId name = trace.Detail(call).kernel_name;
          return std::optional<uint32_t>(name < trace.strings.size() ? name : 0);
        },
        &found);
    if (found.empty()) continue;
    ++ranges_with_steps;
    from = found.back().end_call;
    if (const size_t group = GroupShortSteps(trace, &found); group > 1) {
      absl::StrAppend(&description, " of a short loop body, grouped by ", group, " into ", found.size());
    }
    if (eager.empty()) eager = description;
    steps.insert(steps.end(), found.begin(), found.end());
  }
  if (ranges_with_steps > 1) {
    eager = absl::StrCat(Plural(steps.size(), "step", "steps"), " in ", ranges_with_steps, " sampling windows");
  }
  result.eager_by_repetition = true;
  std::vector<TimeInterval> unavailable;  // where no graphed step may be cut: kept eager steps and reruns
  MarkGraphed(trace, &steps);
  SortByReplay(trace, std::move(steps), &result, &unavailable);
  // A step that ran a capture is no step (DropCaptureIterations); where one held the replays that followed the
  // capture (a graphed run, then the program's eager reference run: the eager anchor spans both), those replays
  // are cut by repetition of their own. Otherwise only replays after the last eager step are.
  DropOverlapping(captures, &result.eager);
  DropOverlapping(captures, &result.graphed);
  std::vector<Iteration> replays;
  std::string graphed = GraphedStepsByRepetition(trace, result.graphed.empty() ? 0 : from, &replays);
  for (const Iteration& step : result.eager) unavailable.push_back({step.start_ns, step.end_ns, 0});
  for (const Iteration& step : result.graphed) unavailable.push_back({step.start_ns, step.end_ns, 0});
  const size_t cut = replays.size();
  DropOverlapping(unavailable, &replays);
  if (replays.size() != cut) graphed = replays.empty() ? "" : Plural(replays.size(), "step", "steps");
  result.graphed.insert(result.graphed.end(), replays.begin(), replays.end());
  if (!eager.empty() || !graphed.empty()) {
    result.source = absl::StrCat("repeated launch sequence (", eager.empty() ? "no" : eager, " eager, ",
                                 graphed.empty() ? "no" : graphed, " graphed)");
  }
}

}  // namespace

Iterations FindIterations(const trace::Trace& trace, const NvtxIndex& nvtx, const trace::ProbeRecords& probe,
                          const IterationOptions& options) {
  Iterations result;
  const std::vector<TimeInterval> audits = AuditSpans(probe);
  const std::vector<TimeInterval> captures = CaptureSpans(trace);  // begin to end on one thread
  // Without --region, an outermost NVTX range the program repeats (its "step" marker) cuts the steps.
  constexpr size_t kMinRepeatedRanges = 3;
  const bool automatic = options.region.empty();
  const std::string region = automatic ? nvtx.MostRepeatedOutermostRange(kMinRepeatedRanges) : options.region;
  if (!region.empty()) {
    StepsFromNvtxRanges(trace, nvtx, region, automatic, &result);
  } else if (!StepsFromProgramLoops(trace, probe.program_steps, audits, captures, &result)) {
    StepsByLaunchRepetition(trace, audits, captures, &result);
  }
  if (result.reruns > 0 && !result.source.empty()) {
    absl::StrAppend(&result.source, "; ", Plural(result.reruns, "step", "steps"),
                    " left out for replaying a graph and also launching its kernels one by one");
  }
  DropOverlapping(audits, &result.eager);
  DropOverlapping(audits, &result.graphed);
  DropCaptureIterations(captures, &result);
  size_t unrecorded = 0;
  for (std::vector<Iteration>* steps : {&result.eager, &result.graphed}) {
    for (Iteration& step : *steps) {
      step.launches_recorded = trace.LaunchesRecorded(step.start_ns, step.end_ns);
      unrecorded += step.launches_recorded ? 0 : 1;
    }
  }
  if (!result.source.empty() && trace.recorder.launches != trace::LaunchRecording::kAll) {
    absl::StrAppend(&result.source, "; launches ", trace::LaunchRecordingName(trace.recorder.launches), ": ",
                    Plural(unrecorded, "step", "steps"), " without their launches");
  }
  Select(options, &result.eager);
  Select(options, &result.graphed);
  return result;
}

StepSelectionCount CountStepSelection(const trace::Trace& trace, const IterationOptions& options, bool check_steps) {
  StepSelectionCount count;
  count.region_seen = options.region.empty();
  absl::flat_hash_map<std::string, size_t> range_counts;
  for (const trace::NvtxEvent& event : trace.nvtx) {
    if (event.kind != trace::NvtxEvent::Kind::kPush && event.kind != trace::NvtxEvent::Kind::kRangeStart) continue;
    const absl::string_view name = trace.String(event.message);
    if (name == options.region) count.region_seen = true;
    if (!count.region_seen) ++range_counts[name];
  }
  if (!count.region_seen) {
    count.ranges.assign(range_counts.begin(), range_counts.end());
    return count;
  }
  if (!check_steps) return count;
  const NvtxIndex nvtx(trace);
  const trace::ProbeRecords probe = trace::DecodeProbeRecords(trace);
  IterationOptions all = options;
  all.first = 0;
  all.last.reset();
  const Iterations every = FindIterations(trace, nvtx, probe, all);
  count.steps_found = every.eager.size() + every.graphed.size();
  const Iterations selected = FindIterations(trace, nvtx, probe, options);
  count.steps_selected = selected.eager.size() + selected.graphed.size();
  return count;
}

absl::Status JudgeStepSelection(const std::vector<StepSelectionCount>& counts, const IterationOptions& options,
                                bool check_steps) {
  bool region_seen = counts.empty() || options.region.empty();
  size_t steps_found = 0;
  size_t steps_selected = 0;
  absl::flat_hash_map<std::string, size_t> range_counts;
  for (const StepSelectionCount& count : counts) {
    region_seen |= count.region_seen;
    steps_found += count.steps_found;
    steps_selected += count.steps_selected;
    for (const auto& [name, n] : count.ranges) range_counts[name] += n;
  }
  if (!region_seen) {
    std::vector<std::pair<size_t, std::string>> ranges;
    for (const auto& [name, count] : range_counts) ranges.emplace_back(count, name);
    std::sort(ranges.rbegin(), ranges.rend());
    if (ranges.size() > 5) ranges.resize(5);
    std::vector<std::string> names;
    for (const auto& [count, name] : ranges) names.push_back(absl::StrCat("'", name, "' (", count, ")"));
    return absl::NotFoundError(
        absl::StrCat("--region '", options.region, "' matches no NVTX range in the trace", counts.size() > 1 ? "s" : "",
                     names.empty() ? " (it has none)" : absl::StrCat("; ranges there: ", absl::StrJoin(names, ", "))));
  }
  if (check_steps && steps_found > 0 && steps_selected == 0) {
    return absl::OutOfRangeError(absl::StrCat("the step range selects none of the ",
                                              Plural(steps_found, "step", "steps"),
                                              " found (steps are numbered from 0)"));
  }
  return absl::OkStatus();
}

std::vector<Iteration> LaunchRecorded(const std::vector<Iteration>& steps) {
  std::vector<Iteration> recorded;
  std::copy_if(steps.begin(), steps.end(), std::back_inserter(recorded),
               [](const Iteration& step) { return step.launches_recorded; });
  return recorded;
}

}  // namespace graphcheck::analysis
