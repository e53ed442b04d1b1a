#include "analysis/coverage.h"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "analysis/launch_metrics.h"
#include "analysis/torch_ops.h"
#include "analysis/trace_analysis.h"
#include "core/check_ids.h"
#include "core/metrics.h"
#include "core/number_ranges.h"
#include "core/plural.h"
#include "trace/api_names.h"
#include "trace/python_frames.h"

namespace graphcheck::analysis {
namespace {

using trace::ApiCall;
using trace::ApiKind;
using trace::CaptureStatus;

constexpr double kNsPerUs = 1e3;

// A selected step and how the report names it, in time order.
struct LabelledStep {
  const Iteration* step = nullptr;
  bool graphed = false;
};

std::string Label(const LabelledStep& s) {
  return absl::StrCat(s.graphed ? "graphed" : "eager", " step ", s.step->index);
}

std::vector<LabelledStep> StepsInOrder(const Iterations& iterations) {
  std::vector<LabelledStep> steps;
  for (const Iteration& step : iterations.eager) steps.push_back({&step, false});
  for (const Iteration& step : iterations.graphed) steps.push_back({&step, true});
  std::sort(steps.begin(), steps.end(),
            [](const LabelledStep& a, const LabelledStep& b) { return a.step->start_ns < b.step->start_ns; });
  return steps;
}

bool OutsideCapture(const ApiCall& call) { return call.capture_status == CaptureStatus::kNone; }

// Whether capture window `w` left no usable graph: it never ended, its end failed, or a Python exception left it.
bool CaptureFailed(const trace::Trace& trace, const ProbeIndex& probe, const CaptureWindow& window, size_t w) {
  return !window.end_call || trace.Detail(trace.api_calls[*window.end_call]).return_code != 0 || probe.HasException(w);
}

std::string OriginName(trace::ProbeOrigin origin) { return std::string(trace::ProbeOriginName(origin)); }

// What the GPU ran for each graph launch: its GPU span, its kernels, and who made the graph.
class ReplayIndex {
 public:
  struct Replay {
    double gpu_us = 0;
    uint64_t kernels = 0;
    std::string origin;
  };

  explicit ReplayIndex(const TraceAnalysis& analysis) : trace_(analysis.trace()) {
    for (const trace::GraphLaunchActivity& g : trace_.graph_launches) activity_.emplace(g.correlation_id, &g);
    CountNodeKernels();
    IndexGraphs(analysis);
  }

  // Empty when the GPU's record of the replay is missing (launch recording was off).
  std::optional<Replay> Find(const ApiCall& launch) const {
    auto it = activity_.find(launch.correlation_id);
    if (it == activity_.end()) return std::nullopt;
    const uint64_t graph = trace_.Detail(launch).graph_id;
    Replay replay;
    replay.gpu_us =
        it->second->end_ns > it->second->start_ns ? (it->second->end_ns - it->second->start_ns) / kNsPerUs : 0;
    const auto nodes = node_count_.find(graph);
    const auto recorded = node_kernels_.find(launch.correlation_id);
    if (recorded != node_kernels_.end()) {
      // Later replays outside a launch-recording window carry the last recorded launch's id: cap at the graph's size.
      replay.kernels =
          nodes != node_count_.end() ? std::min<uint64_t>(recorded->second, nodes->second) : recorded->second;
    } else if (nodes != node_count_.end()) {
      replay.kernels = nodes->second;
    }
    const auto origin = origin_.find(graph);
    replay.origin = origin != origin_.end() ? origin->second : OriginName(trace::ProbeOrigin::kUnknown);
    return replay;
  }

 private:
  // Distinct graph nodes among the kernel records of each launch (a node id 0 counts each record).
  void CountNodeKernels() {
    absl::flat_hash_set<std::pair<uint32_t, uint64_t>> seen;
    for (const trace::KernelActivity& k : trace_.kernels) {
      if (k.graph_id == 0) continue;
      const uint64_t node = trace_.Shape(k).graph_node_id;
      if (node != 0 && !seen.emplace(k.correlation_id, node).second) continue;
      ++node_kernels_[k.correlation_id];
    }
  }

  // Each captured graph's node count (capture end or instantiation) and origin (the probe's, for its capture window).
  void IndexGraphs(const TraceAnalysis& analysis) {
    for (const ApiCall& call : trace_.api_calls) {
      if (call.kind != ApiKind::kCaptureEnd && call.kind != ApiKind::kGraphInstantiate) continue;
      const trace::CallDetail& d = trace_.Detail(call);
      if (d.graph_id != 0 && d.node_count != 0) node_count_[d.graph_id] = d.node_count;
    }
    const std::vector<CaptureWindow>& windows = analysis.captures().windows();
    for (size_t w = 0; w < windows.size(); ++w) {
      if (!windows[w].end_call) continue;
      const uint64_t graph = trace_.Detail(trace_.api_calls[*windows[w].end_call]).graph_id;
      if (graph != 0) origin_.emplace(graph, OriginName(analysis.probe().Origin(w)));
    }
  }

  const trace::Trace& trace_;
  absl::flat_hash_map<uint32_t, const trace::GraphLaunchActivity*> activity_;  // by launch correlation id
  absl::flat_hash_map<uint32_t, uint64_t> node_kernels_;                       // by launch correlation id
  absl::flat_hash_map<uint64_t, uint32_t> node_count_;                         // by captured graph id
  absl::flat_hash_map<uint64_t, std::string> origin_;                          // by captured graph id
};

void AddGraphed(const std::string& origin, uint64_t kernels, double gpu_us, StepCoverage* into) {
  auto it = std::find_if(into->graphed.begin(), into->graphed.end(),
                         [&](const CoverageShare& s) { return s.origin == origin; });
  if (it == into->graphed.end()) it = into->graphed.insert(into->graphed.end(), CoverageShare{origin, 0, 0});
  it->kernels += kernels;
  it->gpu_us += gpu_us;
}

void SortByGpuTime(std::vector<CoverageShare>* shares) {
  std::sort(shares->begin(), shares->end(), [](const CoverageShare& a, const CoverageShare& b) {
    return std::make_tuple(-a.gpu_us, -static_cast<double>(a.kernels), a.origin) <
           std::make_tuple(-b.gpu_us, -static_cast<double>(b.kernels), b.origin);
  });
}

void AddStep(const StepCoverage& step, StepCoverage* total) {
  total->eager_kernels += step.eager_kernels;
  total->eager_gpu_us += step.eager_gpu_us;
  for (const CoverageShare& s : step.graphed) AddGraphed(s.origin, s.kernels, s.gpu_us, total);
}

// Eager kernels grouped by call site (kernel name, NVTX path, Python stack, backtrace), with what their reason needs:
// whether the grid and block sizes they ran with differ from step to step, and a synchronization in a step they ran
// in, on their thread.
struct RemainderGroup {
  size_t first_call = 0;
  trace::StringId kernel = 0;
  uint64_t launches = 0;
  double gpu_us = 0;
  uint64_t steps = 0;
  size_t last_step = ~size_t{0};
  // The sizes of one step's launches as a multiset hash (a sum: order-free), the first step's, and whether a later
  // step's differed.
  uint64_t step_shapes = 0;
  std::optional<uint64_t> first_step_shapes;
  bool shapes_vary = false;
  std::optional<size_t> sync_call;

  void EndStep() {
    if (last_step == ~size_t{0}) return;
    if (!first_step_shapes) {
      first_step_shapes = step_shapes;
    } else if (step_shapes != *first_step_shapes) {
      shapes_vary = true;
    }
    step_shapes = 0;
  }
};

class RemainderCollector {
 public:
  explicit RemainderCollector(const TraceAnalysis& analysis) : analysis_(analysis), trace_(analysis.trace()) {}

  // Before the step's launches: the first synchronization of the program's own on each thread.
  void BeginStep(const Iteration& step, size_t step_number) {
    step_number_ = step_number;
    first_sync_.clear();
    for (size_t i = step.first_call; i < step.end_call; ++i) {
      const ApiCall& call = trace_.api_calls[i];
      if (OutsideCapture(call) && trace::IsSynchronizing(call.kind) && !CalledByGraphMachinery(trace_, call)) {
        first_sync_.emplace(call.thread_id, i);
      }
    }
  }

  void Add(size_t call, const trace::KernelActivity& kernel) {
    const ApiCall& c = trace_.api_calls[call];
    const trace::CallDetail& d = trace_.Detail(c);
    const auto key =
        std::make_tuple(d.kernel_name, analysis_.nvtx().PathAt(c.thread_id, c.start_ns), d.python_stack, d.backtrace);
    auto [it, added] = index_.emplace(key, groups_.size());
    if (added) {
      groups_.emplace_back();
      groups_.back().first_call = call;
      groups_.back().kernel = d.kernel_name;
    }
    RemainderGroup& group = groups_[it->second];
    ++group.launches;
    group.gpu_us += kernel.end_ns > kernel.start_ns ? (kernel.end_ns - kernel.start_ns) / kNsPerUs : 0;
    if (group.last_step != step_number_) {
      group.EndStep();
      group.last_step = step_number_;
      ++group.steps;
    }
    group.step_shapes += absl::HashOf(d.grid, d.block);
    if (!group.sync_call) {
      if (auto sync = first_sync_.find(c.thread_id); sync != first_sync_.end()) group.sync_call = sync->second;
    }
  }

  // Largest GPU time first (then first seen); the first `keep`, and how many more there are.
  std::vector<RemainderGroup> Largest(size_t keep, uint64_t* more) {
    for (RemainderGroup& group : groups_) group.EndStep();
    std::stable_sort(groups_.begin(), groups_.end(),
                     [](const RemainderGroup& a, const RemainderGroup& b) { return a.gpu_us > b.gpu_us; });
    *more = groups_.size() > keep ? groups_.size() - keep : 0;
    if (groups_.size() > keep) groups_.resize(keep);
    return std::move(groups_);
  }

 private:
  const TraceAnalysis& analysis_;
  const trace::Trace& trace_;
  size_t step_number_ = 0;
  absl::flat_hash_map<uint32_t, size_t> first_sync_;  // thread -> call
  absl::flat_hash_map<std::tuple<trace::StringId, absl::string_view, trace::PythonStackId, trace::BacktraceId>, size_t>
      index_;
  std::vector<RemainderGroup> groups_;
};

// One step's split; false when the GPU recorded nothing of it (launch recording was off).
bool MeasureStep(const TraceAnalysis& analysis, const ReplayIndex& replays, const Iteration& step,
                 RemainderCollector* remainders, StepCoverage* out) {
  if (!step.launches_recorded) return false;
  const trace::Trace& trace = analysis.trace();
  bool recorded = false;
  for (size_t i = step.first_call; i < step.end_call; ++i) {
    const ApiCall& call = trace.api_calls[i];
    if (!OutsideCapture(call) || trace.Detail(call).return_code != 0) continue;
    if (call.kind == ApiKind::kKernelLaunch) {
      const int64_t k = analysis.kernel_by_correlation().Find(call.correlation_id);
      if (k < 0) continue;
      const trace::KernelActivity& kernel = trace.kernels[k];
      ++out->eager_kernels;
      out->eager_gpu_us += kernel.end_ns > kernel.start_ns ? (kernel.end_ns - kernel.start_ns) / kNsPerUs : 0;
      remainders->Add(i, kernel);
      recorded = true;
    } else if (call.kind == ApiKind::kGraphLaunch) {
      const std::optional<ReplayIndex::Replay> replay = replays.Find(call);
      if (!replay) continue;
      AddGraphed(replay->origin, replay->kernels, replay->gpu_us, out);
      recorded = true;
    }
  }
  SortByGpuTime(&out->graphed);
  return recorded;
}

// "eager steps 1-5, graphed steps 1-2".
std::string StepList(const std::vector<LabelledStep>& steps) {
  std::vector<size_t> eager, graphed;
  for (const LabelledStep& s : steps) (s.graphed ? graphed : eager).push_back(s.step->index);
  std::vector<std::string> parts;
  if (!eager.empty()) parts.push_back(absl::StrCat("eager steps ", NumberRanges(eager, ", ")));
  if (!graphed.empty()) parts.push_back(absl::StrCat("graphed steps ", NumberRanges(graphed, ", ")));
  return absl::StrJoin(parts, ", ");
}

std::string Scope(const std::vector<LabelledStep>& counted, const std::vector<LabelledStep>& unrecorded,
                  const std::vector<LabelledStep>& before_graphs, const std::string& source) {
  std::string scope = counted.empty() ? "no step has kernel records"
                                      : absl::StrCat(Plural(counted.size(), "step", "steps"), " with kernel records (",
                                                     StepList(counted), "; steps from ", source, ")");
  if (!unrecorded.empty()) {
    absl::StrAppend(&scope, "; ", Plural(unrecorded.size(), "step", "steps"), " without kernel records left out (",
                    StepList(unrecorded),
                    "): the trace has no GPU record of their launches (sampled or capture-only launch recording), so "
                    "their coverage is not known");
  }
  if (!before_graphs.empty()) {
    absl::StrAppend(&scope, "; ", StepList(before_graphs),
                    " left out: the program ran them before it replayed graphs (warmup, a baseline), and the "
                    "figures are those of the steps that replay graphs");
  }
  return scope;
}

// Why an eager remainder is not graphed, from what the trace knows: its kernel in a failed capture, torch.compile's
// skips, its shapes, a synchronization in its steps, its kernel in a graph elsewhere; else never captured.
class ReasonFinder {
 public:
  explicit ReasonFinder(const TraceAnalysis& analysis) : analysis_(analysis), trace_(analysis.trace()) {
    IndexCapturedKernels();
    const std::vector<trace::CompileSkip>& skips = analysis.probe().records().compile_skips;
    if (!skips.empty()) first_skip_ = &skips.front();
    skips_ = skips.size();
  }

  void Explain(const RemainderGroup& group, EagerRemainder* out) const {
    const absl::string_view kernel = trace_.String(group.kernel);
    if (auto failed = failed_window_.find(group.kernel); failed != failed_window_.end()) {
      return FailedCapture(failed->second, out);
    }
    if (first_skip_ && (absl::StartsWith(kernel, "triton_") || absl::StartsWith(kernel, "triton::"))) {
      return CompileSkip(out);
    }
    if (group.shapes_vary) {
      out->reason = check_id::kDynamicShape;
      out->detail = "launched with other grid or block sizes from step to step: a graph replays the sizes it captured";
      return;
    }
    if (group.sync_call) return SyncInRegion(*group.sync_call, out);
    if (auto graphed = made_graph_window_.find(group.kernel); graphed != made_graph_window_.end()) {
      out->reason = "outside-graph";
      out->detail = absl::StrCat("the same kernel is in a graph ", CaptureSite(graphed->second),
                                 ", but these launches run outside its replays");
      out->reason_where = analysis_.Locate(analysis_.captures().windows()[graphed->second].begin_call);
      return;
    }
    out->reason = "never-captured";
    out->detail = "no capture in the trace launched this kernel";
  }

 private:
  // Kernel name -> the first capture window that launched it and failed, and the first that made a graph.
  void IndexCapturedKernels() {
    const std::vector<CaptureWindow>& windows = analysis_.captures().windows();
    absl::flat_hash_map<uint64_t, size_t> by_capture_id;
    for (size_t w = 0; w < windows.size(); ++w) {
      if (windows[w].capture_id != 0) by_capture_id.emplace(windows[w].capture_id, w);
    }
    for (const ApiCall& call : trace_.api_calls) {
      if (call.kind != ApiKind::kKernelLaunch || OutsideCapture(call)) continue;
      auto w = by_capture_id.find(call.capture_id);
      if (w == by_capture_id.end()) continue;
      const bool failed = CaptureFailed(trace_, analysis_.probe(), windows[w->second], w->second);
      (failed ? failed_window_ : made_graph_window_).emplace(trace_.Detail(call).kernel_name, w->second);
    }
  }

  // "(begun by the program at train.py:30 in step)", "(at train.py:30 in step)" when the probe did not see it begin,
  // "(on stream 7)" without a Python stack.
  std::string CaptureSite(size_t w) const {
    const CaptureWindow& window = analysis_.captures().windows()[w];
    const std::string site = trace::ProgramSite(analysis_.Locate(window.begin_call).python);
    const trace::ProbeOrigin origin = analysis_.probe().Origin(w);
    std::string text = origin == trace::ProbeOrigin::kUnknown ? "" : absl::StrCat("begun by ", DescribeOrigin(origin));
    if (!site.empty()) absl::StrAppend(&text, text.empty() ? "" : " ", "at ", site);
    if (text.empty()) text = absl::StrCat("on stream ", window.stream_id);
    return absl::StrCat("(", text, ")");
  }

  void FailedCapture(size_t w, EagerRemainder* out) const {
    const CaptureWindow& window = analysis_.captures().windows()[w];
    out->reason = "failed-capture";
    out->detail = absl::StrCat("launched in a capture that failed ", CaptureSite(w));
    if (window.root_problem) {
      const CaptureProblem& problem = analysis_.captures().problems()[*window.root_problem];
      out->reason_where = analysis_.Locate(problem.call);
      const std::string site = trace::ProgramSite(out->reason_where.python);
      absl::StrAppend(&out->detail, ": ", CauseCheckId(problem.cause), ", ", out->reason_where.api,
                      OperatorClause(out->reason_where), site.empty() ? "" : absl::StrCat(" at ", site));
      return;
    }
    for (const PythonException& exception : analysis_.probe().exceptions()) {
      if (exception.window != w) continue;
      out->reason_where = ProbeEventLocation(trace_, exception.record.at);
      absl::StrAppend(&out->detail, ": ", exception.check_id, ", ", ExceptionText(exception.record));
      return;
    }
    out->reason_where = analysis_.Locate(window.begin_call);
  }

  void CompileSkip(EagerRemainder* out) const {
    const trace::CompileSkip& skip = *first_skip_;
    out->reason = check_id::kCompileCudagraphSkipped;
    out->detail = absl::StrCat("torch.compile ran ", skips_ == 1 ? "a function" : absl::StrCat(skips_, " functions"),
                               " without CUDA graphs and this is inductor's kernel: ", skip.reason);
    out->reason_where = ProbeEventLocation(trace_, skip.at);
  }

  void SyncInRegion(size_t sync, EagerRemainder* out) const {
    out->reason = check_id::kSyncInRegion;
    out->reason_where = analysis_.Locate(sync);
    const std::string site = trace::ProgramSite(out->reason_where.python);
    out->detail = absl::StrCat("its steps synchronize with the host on its thread (", out->reason_where.api,
                               OperatorClause(out->reason_where), site.empty() ? "" : absl::StrCat(" at ", site),
                               "): a capture of the region would fail");
  }

  const TraceAnalysis& analysis_;
  const trace::Trace& trace_;
  absl::flat_hash_map<trace::StringId, size_t> failed_window_;
  absl::flat_hash_map<trace::StringId, size_t> made_graph_window_;
  const trace::CompileSkip* first_skip_ = nullptr;
  uint64_t skips_ = 0;
};

std::vector<EagerRemainder> ExplainRemainders(const TraceAnalysis& analysis,
                                              const std::vector<RemainderGroup>& groups) {
  const ReasonFinder reasons(analysis);
  std::vector<EagerRemainder> remainders;
  for (const RemainderGroup& group : groups) {
    EagerRemainder& r = remainders.emplace_back();
    r.kernel = std::string(analysis.trace().String(group.kernel));
    r.where = analysis.Locate(group.first_call);
    r.launches = group.launches;
    r.steps = group.steps;
    r.gpu_us = group.gpu_us;
    reasons.Explain(group, &r);
  }
  return remainders;
}

// "make_graphed_callables" -> "make_graphed_callables", "cudagraph-trees" -> "cudagraph_trees": a metric name part.
std::string MetricPart(const std::string& origin) { return absl::StrReplaceAll(origin, {{"-", "_"}}); }

}  // namespace

std::optional<Coverage> ComputeCoverage(const TraceAnalysis& analysis, const IterationOptions& iterations,
                                        const CoverageLimits& limits) {
  const Iterations& selected = analysis.iterations(iterations);
  std::vector<LabelledStep> steps = StepsInOrder(selected);
  if (steps.empty()) return std::nullopt;
  // A run that replays graphs is judged from its first graphed step on: the eager steps before it (warmup, a
  // baseline; under sampled recording most of the steps with kernel records) would otherwise weigh in by how long the
  // program warmed up. Eager steps after it (a fallback) still count.
  const auto first_graphed = std::find_if(steps.begin(), steps.end(), [](const LabelledStep& s) { return s.graphed; });
  std::vector<LabelledStep> before_graphs;
  if (first_graphed != steps.end()) {
    before_graphs.assign(steps.begin(), first_graphed);
    steps.erase(steps.begin(), first_graphed);
  }
  const trace::Trace& trace = analysis.trace();
  Coverage coverage;
  coverage.process =
      trace.process.rank >= 0 ? absl::StrCat("rank ", trace.process.rank) : absl::StrCat("pid ", trace.process.pid);
  coverage.total.label = "all";
  const ReplayIndex replays(analysis);
  RemainderCollector remainders(analysis);
  std::vector<LabelledStep> counted, unrecorded;
  for (size_t n = 0; n < steps.size(); ++n) {
    remainders.BeginStep(*steps[n].step, n);
    StepCoverage step;
    step.label = Label(steps[n]);
    if (!MeasureStep(analysis, replays, *steps[n].step, &remainders, &step)) {
      unrecorded.push_back(steps[n]);
      continue;
    }
    counted.push_back(steps[n]);
    AddStep(step, &coverage.total);
    if (coverage.steps.size() < limits.steps) {
      coverage.steps.push_back(std::move(step));
    } else {
      ++coverage.dropped_steps;
    }
  }
  SortByGpuTime(&coverage.total.graphed);
  coverage.steps_counted = counted.size();
  coverage.steps_without_records = unrecorded.size();
  coverage.scope = Scope(counted, unrecorded, before_graphs, selected.source);
  coverage.remainders = ExplainRemainders(analysis, remainders.Largest(limits.remainders, &coverage.more_remainders));
  return coverage;
}

std::vector<Metric> CoverageMetrics(const Coverage& coverage) {
  std::vector<Metric> metrics;
  metrics.push_back(metric::kCoverageSteps.With(static_cast<double>(coverage.steps_counted)));
  metrics.push_back(metric::kCoverageStepsWithoutRecords.With(static_cast<double>(coverage.steps_without_records)));
  const StepCoverage& total = coverage.total;
  uint64_t graphed_kernels = 0;
  double graphed_us = 0;
  for (const CoverageShare& s : total.graphed) {
    graphed_kernels += s.kernels;
    graphed_us += s.gpu_us;
  }
  const uint64_t all_kernels = graphed_kernels + total.eager_kernels;
  const double all_us = graphed_us + total.eager_gpu_us;
  auto share = [&](Metric metric, double part, double whole) {
    if (whole <= 0) return;
    metric.value = part / whole;
    metrics.push_back(std::move(metric));
  };
  share(metric::kCoverageGraphedKernelShare.With(0), graphed_kernels, all_kernels);
  share(metric::kCoverageGraphedGpuTimeShare.With(0), graphed_us, all_us);
  // One share per maker of graphs: NAME.ORIGIN.
  for (const CoverageShare& s : total.graphed) {
    const std::string part = MetricPart(s.origin);
    Metric kernels = metric::kCoverageGraphedKernelShare.With(
        0, absl::StrCat("share of the counted steps' kernels replayed from graphs made by ", s.origin));
    kernels.scope.origin = part;
    share(std::move(kernels), s.kernels, all_kernels);
    Metric gpu_time = metric::kCoverageGraphedGpuTimeShare.With(
        0, absl::StrCat("share of the counted steps' GPU time in replays of graphs made by ", s.origin));
    gpu_time.scope.origin = part;
    share(std::move(gpu_time), s.gpu_us, all_us);
  }
  if (coverage.steps_counted > 0) {
    std::vector<double> eager_us;
    for (const StepCoverage& step : coverage.steps) eager_us.push_back(step.eager_gpu_us);
    metrics.push_back(metric::kCoverageEagerGpuUs.With(Quantile(eager_us, 0.5)));
  }
  return metrics;
}

}  // namespace graphcheck::analysis
