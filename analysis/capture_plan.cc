#include "analysis/capture_plan.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "analysis/iterations.h"
#include "analysis/launch_metrics.h"
#include "analysis/memory_forecast.h"
#include "analysis/nvtx_index.h"
#include "analysis/trace_analysis.h"
#include "core/plural.h"
#include "core/quantile.h"
#include "trace/python_frames.h"

namespace graphcheck::analysis {
namespace {

constexpr size_t kMaxRegions = 10;         // regions planned, by eager time
constexpr size_t kMaxSizes = 2048;         // distinct sizes bucketed (the choice is quadratic in them)
constexpr size_t kMemoryCallsPerSize = 3;  // calls of one size replayed through the pool model

struct Input {
  std::string name;
  std::vector<int64_t> dims;
};

// One outermost module call, from its begin and end events.
struct ModuleCall {
  uint64_t module = 0;
  std::string type;
  std::vector<Input> inputs;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint64_t hooks_ns = 0;  // what the probe's hooks added to the module calls nested in it (trace format 1.13)
  trace::PythonStackId stack = 0;

  // The call's host time without the probe's hooks, in us.
  double HostUs() const {
    const uint64_t span = end_ns - start_ns;
    return (span - std::min(span, hooks_ns)) / 1e3;
  }
};

// "Class\t0=32x128\tinput_ids=8x512": the class and the tensor inputs; a malformed input is left out.
void ParseCallText(absl::string_view text, ModuleCall* call) {
  std::vector<absl::string_view> fields = absl::StrSplit(text, '\t');
  call->type = std::string(fields.front());
  for (size_t i = 1; i < fields.size(); ++i) {
    const size_t equals = fields[i].rfind('=');
    if (equals == absl::string_view::npos) continue;
    Input input{std::string(fields[i].substr(0, equals)), {}};
    const absl::string_view shape = fields[i].substr(equals + 1);
    bool valid = true;
    if (shape != "scalar") {
      for (absl::string_view dim : absl::StrSplit(shape, 'x')) {
        int64_t value = 0;
        valid = valid && absl::SimpleAtoi(dim, &value) && value >= 0;
        input.dims.push_back(value);
      }
    }
    if (valid) call->inputs.push_back(std::move(input));
  }
}

std::vector<ModuleCall> ModuleCalls(const trace::ProbeRecords& records) {
  std::vector<ModuleCall> calls;
  for (const trace::ModuleCallRecord& record : records.module_calls) {
    ModuleCall& call = calls.emplace_back();
    call.module = record.module;
    call.start_ns = record.at.time_ns;
    call.end_ns = record.end_ns;
    call.hooks_ns = record.hooked_calls * record.hook_ns_each;
    call.stack = record.at.stack;
    ParseCallText(record.call_text, &call);
  }
  return calls;
}

// The calls of one module with one input structure (names and ranks): the ones whose shapes can be bucketed together.
std::string StructureKey(const ModuleCall& call) {
  std::string key = absl::StrCat(call.module, "|", call.type);
  for (const Input& input : call.inputs) absl::StrAppend(&key, "|", input.name, "/", input.dims.size());
  return key;
}

struct Dimension {
  size_t input = 0;
  size_t dim = 0;
  std::string Name(const ModuleCall& call) const { return absl::StrCat(call.inputs[input].name, " dim ", dim); }
};

// The dimensions whose sizes differ between calls, most sizes first.
std::vector<Dimension> VaryingDimensions(const std::vector<const ModuleCall*>& calls) {
  std::vector<std::pair<size_t, Dimension>> varying;
  const ModuleCall& first = *calls.front();
  for (size_t i = 0; i < first.inputs.size(); ++i) {
    for (size_t d = 0; d < first.inputs[i].dims.size(); ++d) {
      std::set<int64_t> sizes;
      for (const ModuleCall* call : calls) sizes.insert(call->inputs[i].dims[d]);
      if (sizes.size() > 1) varying.push_back({sizes.size(), Dimension{i, d}});
    }
  }
  std::stable_sort(varying.begin(), varying.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<Dimension> out;
  for (const auto& [count, dimension] : varying) out.push_back(dimension);
  return out;
}

// Whether `dimension` has one size per size of `bucketed` (an attention mask's batch dimension): it is padded with the
// bucket, not to its largest size.
bool Follows(const std::vector<const ModuleCall*>& calls, const Dimension& dimension, const Dimension& bucketed) {
  std::map<int64_t, int64_t> seen;
  for (const ModuleCall* call : calls) {
    const int64_t key = call->inputs[bucketed.input].dims[bucketed.dim];
    const int64_t value = call->inputs[dimension.input].dims[dimension.dim];
    if (!seen.emplace(key, value).second && seen[key] != value) return false;
  }
  return true;
}

double Median(std::vector<double> values) { return values.empty() ? 0 : Quantile(std::move(values), 0.5); }

// Per size: the calls' figures (medians), and the pool a graph of it would grow.
// `memory_calls`: per size, the call whose pool forecast was largest ({} when the allocator history had none).
std::vector<PlanSize> MeasureSizes(const TraceAnalysis& analysis, const std::vector<const ModuleCall*>& calls,
                                   const std::vector<int64_t>& call_sizes, const PlanModel& model, size_t* unmeasured,
                                   std::vector<TimeInterval>* memory_calls) {
  const trace::Trace& trace = analysis.trace();
  std::vector<Iteration> steps;
  // A call as a step: the API calls that began inside it, on any thread (autograd's own threads launch too).
  for (const ModuleCall* call : calls) steps.push_back(MakeIteration(trace, call->start_ns, call->end_ns));
  const std::vector<StepStats> stats = PerStepStats(analysis, steps, model.launch);
  struct Samples {
    std::vector<double> host_unrecorded, host_recorded, gpu_busy, nodes;
    std::vector<size_t> calls;
  };
  std::map<int64_t, Samples> by_size;
  for (size_t c = 0; c < calls.size(); ++c) {
    Samples& s = by_size[call_sizes[c]];
    s.calls.push_back(c);
    const double host_us = calls[c]->HostUs();
    // A call whose launches were recorded ran slower on the host (the recorder's callbacks): its GPU figures are
    // kept, its host time only where no unrecorded call of the size ran. A call the end of a launch-recording window
    // cut is neither (seen on an H200: a GPT-2 call with 2 of its 47 launches recorded).
    const bool recorded = trace.LaunchesRecorded(calls[c]->start_ns, calls[c]->end_ns);
    const bool unrecorded = !trace.LaunchRecordingOverlaps(calls[c]->start_ns, calls[c]->end_ns);
    if (recorded && stats[c].nodes > 0) {
      s.host_recorded.push_back(host_us);
      s.gpu_busy.push_back(stats[c].gpu_busy_us);
      s.nodes.push_back(stats[c].nodes);
    } else if (unrecorded) {
      s.host_unrecorded.push_back(host_us);
    }
  }
  const uint64_t history_from = trace.allocations.empty() ? ~uint64_t{0} : trace.allocations.front().time_ns;
  std::vector<PlanSize> sizes;
  for (auto& [size, s] : by_size) {
    PlanSize& p = sizes.emplace_back();
    p.size = size;
    p.calls = s.calls.size();
    p.measured = !s.gpu_busy.empty();
    p.gpu_busy_us = Median(s.gpu_busy);
    p.nodes = Median(s.nodes);
    p.eager_us = Median(s.host_unrecorded.empty() ? s.host_recorded : s.host_unrecorded);
    size_t replayed = 0;
    TimeInterval& memory_call = memory_calls->emplace_back();
    for (size_t c : s.calls) {
      if (calls[c]->start_ns < history_from || replayed == kMemoryCallsPerSize) continue;
      const TimeInterval interval{calls[c]->start_ns, calls[c]->end_ns, 0};
      const PoolForecast pool = ForecastPool(trace.allocations, {interval});
      if (replayed == 0 || pool.pool_bytes > p.pool_bytes) memory_call = interval;
      p.pool_bytes = std::max(p.pool_bytes, pool.pool_bytes);
      p.outliving_bytes = std::max(p.outliving_bytes, pool.outliving_bytes);
      ++replayed;
    }
  }
  // A size no recorded call had takes the GPU figures of its nearest measured size.
  for (PlanSize& p : sizes) {
    if (p.measured) continue;
    ++*unmeasured;
    const PlanSize* nearest = nullptr;
    for (const PlanSize& q : sizes) {
      if (q.measured && (nearest == nullptr || std::llabs(q.size - p.size) < std::llabs(nearest->size - p.size))) {
        nearest = &q;
      }
    }
    if (nearest != nullptr) {
      p.gpu_busy_us = nearest->gpu_busy_us;
      p.nodes = nearest->nodes;
    }
  }
  for (PlanSize& p : sizes) p.eager_us = std::max(p.eager_us, p.gpu_busy_us);
  return sizes;
}

// The buckets (indices into `sizes`, the last always sizes.size() - 1) that waste the least padding GPU time with
// `count` buckets: a dynamic programme over the sorted sizes, each group padded to its largest size.
std::vector<size_t> ChooseBuckets(const std::vector<PlanSize>& sizes, size_t count) {
  const size_t n = sizes.size();
  count = std::min(count, n);
  std::vector<double> calls(n + 1, 0), weighted(n + 1, 0);  // prefix sums of calls and calls x GPU time
  for (size_t i = 0; i < n; ++i) {
    calls[i + 1] = calls[i] + sizes[i].calls;
    weighted[i + 1] = weighted[i] + sizes[i].calls * sizes[i].gpu_busy_us;
  }
  auto waste = [&](size_t from, size_t to) {  // sizes[from..to] padded to sizes[to]
    return std::max(0.0, sizes[to].gpu_busy_us * (calls[to + 1] - calls[from]) - (weighted[to + 1] - weighted[from]));
  };
  const double kInf = std::numeric_limits<double>::infinity();
  std::vector<std::vector<double>> best(count + 1, std::vector<double>(n, kInf));
  std::vector<std::vector<size_t>> from(count + 1, std::vector<size_t>(n, 0));
  for (size_t j = 0; j < n; ++j) best[1][j] = waste(0, j);
  for (size_t k = 2; k <= count; ++k) {
    for (size_t j = k - 1; j < n; ++j) {
      for (size_t i = k - 1; i <= j; ++i) {
        const double cost = best[k - 1][i - 1] + waste(i, j);
        if (cost < best[k][j]) {
          best[k][j] = cost;
          from[k][j] = i;
        }
      }
    }
  }
  std::vector<size_t> buckets;
  size_t j = n - 1;
  for (size_t k = count; k >= 1; --k) {
    buckets.push_back(j);
    if (k == 1) break;
    j = from[k][j] - 1;
  }
  std::reverse(buckets.begin(), buckets.end());
  return buckets;
}

// What every set's figures depend on besides its buckets.
struct RegionFacts {
  size_t calls = 0;
  double calls_per_step = 1;
  const std::vector<trace::AllocatorEvent>* allocations = nullptr;  // the allocator's history
  std::vector<TimeInterval> memory_calls;                           // per size (MeasureSizes)
  uint64_t workspace_bytes = 0;  // the cuBLAS workspaces the first capture allocates in its pool
};

// One shared pool, the largest bucket captured first (as a plan is best captured): each capture reuses what the ones
// before it freed and keeps its outputs, replayed through the allocator's model (one call of each bucket); the
// largest bucket's pool and what each other bucket's call left allocated where a bucket has no call in the history.
uint64_t SharedPoolBytes(const std::vector<PlanSize>& sizes, const std::vector<size_t>& chosen,
                         const RegionFacts& facts) {
  std::vector<size_t> order = chosen;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return sizes[a].size > sizes[b].size; });
  std::vector<TimeInterval> captures;
  for (size_t b : order) {
    if (facts.allocations == nullptr || b >= facts.memory_calls.size() || facts.memory_calls[b].end_ns == 0) break;
    captures.push_back(facts.memory_calls[b]);
  }
  if (captures.size() == order.size() && !captures.empty()) {
    return ForecastCapturesIntoOnePool(*facts.allocations, captures).pool_bytes;
  }
  uint64_t largest = 0, outliving = 0, largest_outliving = 0;
  for (size_t b : chosen) {
    outliving += sizes[b].outliving_bytes;
    if (sizes[b].pool_bytes > largest) largest = sizes[b].pool_bytes, largest_outliving = sizes[b].outliving_bytes;
  }
  return largest + (outliving - largest_outliving);
}

BucketSet CostBuckets(const std::string& name, const std::vector<PlanSize>& sizes, const std::vector<size_t>& chosen,
                      const RegionFacts& facts, const PlanModel& model) {
  BucketSet set;
  set.name = name;
  double covered = 0, own_gpu = 0, saving = 0, eager = 0;
  if (!chosen.empty()) set.capture_us = model.capture_first_us;
  for (size_t b : chosen) {
    const PlanSize& bucket = sizes[b];
    set.buckets.push_back(bucket.size);
    set.private_pools_bytes += bucket.pool_bytes;
    set.capture_us +=
        model.capture_fixed_us + (model.warmup_calls + 1) * bucket.eager_us + bucket.nodes * model.instantiate_node_us;
  }
  set.private_pools_bytes += facts.workspace_bytes;  // in the first bucket's pool
  set.shared_pool_bytes = SharedPoolBytes(sizes, chosen, facts) + facts.workspace_bytes;
  size_t bucket = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    const PlanSize& s = sizes[i];
    eager += s.calls * s.eager_us;
    while (bucket < chosen.size() && chosen[bucket] < i) ++bucket;
    if (bucket == chosen.size()) continue;  // above the largest bucket: eager
    const PlanSize& b = sizes[chosen[bucket]];
    const double graphed_us =
        std::max(model.launch.graph_launch_us,
                 b.gpu_busy_us + b.nodes * model.launch.graph_node_us + model.launch.graph_launch_us);
    covered += s.calls;
    own_gpu += s.calls * s.gpu_busy_us;
    set.padding_gpu_us += s.calls * std::max(0.0, b.gpu_busy_us - s.gpu_busy_us);
    saving += s.calls * (s.eager_us - graphed_us);
  }
  set.calls_covered = facts.calls == 0 ? 0 : covered / facts.calls;
  set.padding_share = own_gpu > 0 ? set.padding_gpu_us / own_gpu : 0;
  set.saving_per_call_us = facts.calls == 0 ? 0 : saving / facts.calls;
  set.saving_per_step_us = set.saving_per_call_us * facts.calls_per_step;
  set.saving_share = eager > 0 ? saving / eager : 0;
  set.net_saving_us = saving - set.capture_us;
  return set;
}

// The index of the largest size within the covered quantile of the calls.
size_t CoveredEnd(const std::vector<PlanSize>& sizes, double quantile) {
  size_t total = 0;
  for (const PlanSize& s : sizes) total += s.calls;
  const double limit = std::ceil(quantile * total);
  size_t seen = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    seen += sizes[i].calls;
    if (seen >= limit) return i;
  }
  return sizes.size() - 1;
}

std::vector<BucketSet> ProposeSets(const std::vector<PlanSize>& sizes, const RegionFacts& facts,
                                   const PlanModel& model) {
  const std::vector<PlanSize> covered(sizes.begin(), sizes.begin() + CoveredEnd(sizes, model.covered_quantile) + 1);
  const size_t few = std::min(model.few_buckets, covered.size());
  const size_t many = std::min(model.many_buckets, covered.size());
  size_t balanced = many;
  for (size_t k = 1; k <= many; ++k) {
    const BucketSet trial = CostBuckets("", sizes, ChooseBuckets(covered, k), facts, model);
    if (trial.padding_share <= model.balanced_padding_share) {
      balanced = std::max(k, few);
      break;
    }
  }
  std::vector<BucketSet> sets;
  for (const auto& [name, count] :
       std::vector<std::pair<std::string, size_t>>{{"few", few}, {"balanced", balanced}, {"many", many}}) {
    BucketSet set = CostBuckets(name, sizes, ChooseBuckets(covered, count), facts, model);
    if (!sets.empty() && sets.back().buckets == set.buckets) {
      sets.back().name = absl::StrCat(sets.back().name, ", ", name);
      continue;
    }
    sets.push_back(std::move(set));
  }
  return sets;
}

std::string SizesText(const std::vector<int64_t>& sizes) { return absl::StrJoin(sizes, ", "); }

void Judge(RegionPlan* region) {
  const BucketSet* best = nullptr;
  for (const BucketSet& set : region->sets) {
    if (absl::StrContains(set.name, "balanced")) best = &set;
  }
  if (best == nullptr && !region->sets.empty()) best = &region->sets.front();
  if (best == nullptr) return;
  const bool never_repeat = region->sizes.size() == region->calls && region->calls > 1;
  // A server runs far longer than its recorded sample: the start-up is judged by the calls it takes to pay back,
  // except where no shape repeats (then the sample says how the shapes go).
  region->pays_off = best->saving_per_call_us > 0 && !(never_repeat && best->net_saving_us <= 0);
  if (region->pays_off) {
    // At most 1e18 calls: a count the cast to uint64_t keeps (a saving of a femtosecond would overflow it).
    const double payback = std::min(std::ceil(best->capture_us / best->saving_per_call_us), 1e18);
    region->verdict = absl::StrFormat(
        "Capture %s, for %s %s: the set covers %.0f%% of the calls, pads %.1f%% of their GPU time and saves %.1f us "
        "per call (%.0f%% of the eager time); its start-up capture, %.1f ms, is paid back after %s.",
        Plural(best->buckets.size(), "graph", "graphs"),
        region->dimension.empty() ? "the one shape" : region->dimension.c_str(), SizesText(best->buckets),
        100 * best->calls_covered, 100 * best->padding_share, best->saving_per_call_us, 100 * best->saving_share,
        best->capture_us / 1e3, Plural(static_cast<uint64_t>(payback), "call", "calls"));
    return;
  }
  if (best->saving_per_call_us <= 0) {
    region->verdict =
        "Graphs will not pay off here: each call is GPU-bound, so a graph removes launch time only, and the padding "
        "costs more GPU time than it saves.";
    return;
  }
  region->verdict = absl::StrFormat(
      "Graphs will not pay off here: no shape repeats (%zu calls, %zu shapes), so a graph per shape would never be "
      "replayed, and the bucketed set saves %.1f ms over the run against %.1f ms of captures at start-up.",
      region->calls, region->sizes.size(), (best->net_saving_us + best->capture_us) / 1e3, best->capture_us / 1e3);
}

// The number of the program's own steps (NVTX ranges, or its loop's passes), for the saving per step (0 when the
// trace has none: steps guessed from the launch sequence are not counted on).
size_t ProgramSteps(const TraceAnalysis& analysis) {
  const Iterations& steps = analysis.steps();
  if (steps.source.empty() || steps.eager_by_repetition) return 0;
  return steps.eager.size() + steps.graphed.size();
}

std::vector<RegionPlan> PlanTrace(const trace::Trace& trace, const std::string& prefix, const PlanModel& model,
                                  size_t* unmeasured, bool* no_history) {
  TraceAnalysis analysis(trace);
  const std::vector<ModuleCall> calls = ModuleCalls(analysis.probe().records());
  if (calls.empty()) return {};
  const size_t steps = ProgramSteps(analysis);
  std::map<std::string, std::vector<const ModuleCall*>> groups;
  std::vector<std::string> order;
  for (const ModuleCall& call : calls) {
    const std::string key = StructureKey(call);
    if (groups.count(key) == 0) order.push_back(key);
    groups[key].push_back(&call);
  }
  *no_history = *no_history || trace.allocations.empty();
  std::vector<RegionPlan> regions;
  for (const std::string& key : order) {
    const std::vector<const ModuleCall*>& group = groups[key];
    RegionPlan& region = regions.emplace_back();
    const ModuleCall& first = *group.front();
    const std::string site = trace::ProgramSite(trace::PythonFrames(trace, first.stack));
    region.region = absl::StrCat(prefix, first.type, site.empty() ? "" : absl::StrCat(" at ", site));
    region.calls = group.size();
    region.calls_per_step = steps > 0 ? static_cast<double>(group.size()) / steps : 1;
    const std::vector<Dimension> varying = VaryingDimensions(group);
    std::vector<int64_t> call_sizes(group.size(), 0);
    if (!varying.empty()) {
      region.dimension = varying.front().Name(first);
      for (size_t c = 0; c < group.size(); ++c) {
        call_sizes[c] = group[c]->inputs[varying.front().input].dims[varying.front().dim];
      }
      for (size_t v = 1; v < varying.size(); ++v) {
        if (Follows(group, varying[v], varying.front())) continue;  // padded with the bucket (a mask's batch)
        int64_t largest = 0;
        for (const ModuleCall* call : group) {
          largest = std::max(largest, call->inputs[varying[v].input].dims[varying[v].dim]);
        }
        region.padded_to_max.push_back(absl::StrCat(varying[v].Name(first), " (to ", largest, ")"));
      }
    }
    RegionFacts facts{region.calls, region.calls_per_step, &trace.allocations, {}, 0};
    region.sizes = MeasureSizes(analysis, group, call_sizes, model, unmeasured, &facts.memory_calls);
    if (!trace.allocations.empty()) {
      std::vector<TimeInterval> intervals;
      for (const ModuleCall* call : group) intervals.push_back({call->start_ns, call->end_ns, 0});
      facts.workspace_bytes = CublasWorkspaceBytes(analysis, intervals);
    }
    if (region.sizes.size() > kMaxSizes) region.sizes.resize(kMaxSizes);
    region.sets = ProposeSets(region.sizes, facts, model);
    Judge(&region);
  }
  return regions;
}

double EagerTime(const RegionPlan& region) {
  double total = 0;
  for (const PlanSize& s : region.sizes) total += s.calls * s.eager_us;
  return total;
}

}  // namespace

absl::StatusOr<CapturePlan> PlanCaptures(const std::vector<const trace::Trace*>& traces, const PlanModel& model) {
  CapturePlan plan;
  size_t unmeasured = 0;
  bool no_history = false;
  for (const trace::Trace* trace : traces) {
    const std::string prefix = traces.size() > 1 ? absl::StrCat("pid ", trace->process.pid, ": ") : "";
    for (RegionPlan& region : PlanTrace(*trace, prefix, model, &unmeasured, &no_history)) {
      plan.regions.push_back(std::move(region));
    }
  }
  if (plan.regions.empty()) {
    return absl::InvalidArgumentError(
        "no module calls in the trace: record the program with `graphcheck run --plan -- python ...`");
  }
  std::stable_sort(plan.regions.begin(), plan.regions.end(),
                   [](const RegionPlan& a, const RegionPlan& b) { return EagerTime(a) > EagerTime(b); });
  if (plan.regions.size() > kMaxRegions) {
    plan.notes.push_back(
        absl::StrCat(Plural(plan.regions.size() - kMaxRegions, "smaller region", "smaller regions"), " left out"));
    plan.regions.resize(kMaxRegions);
  }
  if (unmeasured > 0) {
    plan.notes.push_back(absl::StrCat(
        Plural(unmeasured, "size", "sizes"),
        " had no call inside a launch-recording window: their GPU figures are their nearest measured size's "
        "(graphcheck run --plan --launches all measures every call)"));
  }
  // Seen on H200s (bench/results/2026-11-28-session19.md): a recorded 2-layer GPT-2's calls outside the windows took
  // 7-19% longer than an unrecorded process's in 6 runs of 7 (36% in one), and the plan's saving came out 1-15% high.
  plan.notes.push_back(
      "eager times are each size's median call outside launch-recording windows (inside them where a size had none, "
      "slower by the recorder's callbacks); a recorded program runs somewhat slower than alone (a 2-layer GPT-2: "
      "7-19% on H200s), and its first calls of a size run slower while libraries choose kernels, so the savings "
      "lean high");
  if (no_history) {
    plan.notes.push_back(
        "no allocator history in the trace: pool memory is not forecast (it comes from the Python "
        "probe)");
  }
  plan.model = {
      absl::StrFormat("a graphed call takes max(one graph launch, the bucket's GPU busy time + %g us per node + one "
                      "graph launch of %g us) (launch-bound's model)",
                      model.launch.graph_node_us, model.launch.graph_launch_us),
      absl::StrFormat("start-up: %g ms once (the first capture empties the cache the eager calls built up and "
                      "allocates the pool), then per bucket %g ms for torch.cuda.graph's own work, %d eager warmup "
                      "calls and the capture (one call each), and %g us per node to instantiate",
                      model.capture_first_us / 1e3, model.capture_fixed_us / 1e3, model.warmup_calls,
                      model.instantiate_node_us),
      absl::StrFormat("calls above the %g quantile of the sizes run eagerly; \"balanced\" pads at most %g%% of the "
                      "covered calls' GPU time",
                      model.covered_quantile, 100 * model.balanced_padding_share),
      "pools: each bucket's is its largest call's allocations replayed through the caching allocator's model "
      "(memory_forecast); one shared pool replays one call of each bucket, largest first, through one model pool, "
      "each keeping what it left allocated; both add the cuBLAS workspaces the first capture allocates, one per "
      "thread that launched cuBLAS kernels in the calls"};
  return plan;
}

}  // namespace graphcheck::analysis
