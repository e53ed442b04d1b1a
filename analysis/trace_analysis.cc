#include "analysis/trace_analysis.h"

#include <algorithm>
#include <limits>

#include "absl/hash/hash.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "analysis/torch_ops.h"
#include "trace/python_frames.h"

namespace graphcheck::analysis {
namespace {

constexpr size_t kLocationFrames = 8;  // frames shown in a finding; the innermost ones say where

}  // namespace

bool CalledByGraphMachinery(const trace::Trace& trace, const trace::ApiCall& call) {
  const trace::PythonStack* stack = trace.FindPythonStack(trace.Detail(call).python_stack);
  if (stack == nullptr) return false;
  for (const trace::PythonFrameRef& frame : stack->frames) {
    const absl::string_view file = trace.String(frame.file);
    if (trace::IsUserPythonFile(file)) return false;
    // DistributedDataParallel's forward synchronizes its timing events in its first ten iterations: the warmup
    // that the graph recipe runs, not the program's work (ddp-warmup-short covers a capture that comes too early).
    if (absl::EndsWith(file, "/torch/cuda/graphs.py") || absl::StrContains(file, "/torch/_inductor/") ||
        absl::StrContains(file, "/torch/_dynamo/") || absl::EndsWith(file, "/torch/nn/parallel/distributed.py")) {
      return true;
    }
  }
  return false;
}

bool InGraphedCallablesWarmup(const trace::Trace& trace, const trace::ApiCall& call) {
  const trace::PythonStack* stack = trace.FindPythonStack(trace.Detail(call).python_stack);
  if (stack == nullptr) return false;
  return std::any_of(stack->frames.begin(), stack->frames.end(), [&](const trace::PythonFrameRef& frame) {
    return absl::EndsWith(trace.String(frame.file), "/torch/cuda/graphs.py") &&
           absl::StrContains(trace.String(frame.function), "make_graphed_callables");
  });
}

const CaptureAnalysis& TraceAnalysis::captures() const {
  if (!captures_) captures_ = std::make_unique<CaptureAnalysis>(trace_);
  return *captures_;
}

const NvtxIndex& TraceAnalysis::nvtx() const {
  if (!nvtx_) nvtx_ = std::make_unique<NvtxIndex>(trace_);
  return *nvtx_;
}

const Iterations& TraceAnalysis::iterations(const IterationOptions& options) const {
  std::unique_ptr<Iterations>& slot = iterations_[options.Key()];
  if (!slot) slot = std::make_unique<Iterations>(FindIterations(trace_, nvtx(), probe().records(), options));
  return *slot;
}

CorrelationIndex::CorrelationIndex(const std::vector<trace::KernelActivity>& kernels) {
  uint32_t low = ~uint32_t{0};
  uint32_t high = 0;
  size_t count = 0;
  for (const trace::KernelActivity& kernel : kernels) {
    if (kernel.graph_id != 0 || kernel.correlation_id == 0) continue;
    low = std::min(low, kernel.correlation_id);
    high = std::max(high, kernel.correlation_id);
    ++count;
  }
  if (count == 0) return;
  // Dense when the table is at most 4 entries (16 bytes) per kernel: less than the hash map would take.
  const bool dense = high - low < 4 * static_cast<uint64_t>(count) + 1024;
  if (dense) {
    base_ = low;
    dense_.assign(high - low + 1, kNone);
  } else {
    sparse_.reserve(count);
  }
  for (uint32_t k = 0; k < kernels.size(); ++k) {
    const trace::KernelActivity& kernel = kernels[k];
    if (kernel.graph_id != 0 || kernel.correlation_id == 0) continue;
    if (dense) {
      dense_[kernel.correlation_id - base_] = k;
    } else {
      sparse_.emplace(kernel.correlation_id, k);
    }
  }
}

int64_t CorrelationIndex::Find(uint64_t correlation_id) const {
  if (!dense_.empty()) {
    if (correlation_id < base_ || correlation_id - base_ >= dense_.size()) return -1;
    const uint32_t k = dense_[correlation_id - base_];
    // int64_t on both sides: `k == kNone ? -1 : k` would be unsigned, and -1 an index of 2^32 - 1.
    return k == kNone ? int64_t{-1} : int64_t{k};
  }
  if (sparse_.empty()) return -1;  // no kernel records (an empty table's find is not safe in every Abseil release)
  auto it = sparse_.find(correlation_id);
  return it == sparse_.end() ? int64_t{-1} : int64_t{it->second};
}

const ProbeIndex& TraceAnalysis::probe() const {
  if (!probe_) probe_ = std::make_unique<ProbeIndex>(trace_, captures());
  return *probe_;
}

const CorrelationIndex& TraceAnalysis::kernel_by_correlation() const {
  if (!kernel_by_correlation_) kernel_by_correlation_ = std::make_unique<CorrelationIndex>(trace_.kernels);
  return *kernel_by_correlation_;
}

std::vector<std::string> TraceAnalysis::Frames(size_t call) const {
  return trace_.BacktraceFrames(trace_.Detail(trace_.api_calls[call]).backtrace);
}

Location TraceAnalysis::Locate(size_t call) const {
  const trace::ApiCall& c = trace_.api_calls[call];
  Location where;
  where.api = std::string(trace_.String(trace_.Detail(c).name));
  where.thread_id = c.thread_id;
  if (c.stream_id != 0) where.stream_id = c.stream_id;
  where.nvtx_path = std::string(nvtx().PathAt(c.thread_id, c.start_ns));
  std::vector<std::string> frames = Frames(call);
  where.torch_op = TorchOpFromFrames(frames);
  if (frames.size() > kLocationFrames) frames.resize(kLocationFrames);
  where.backtrace = std::move(frames);
  where.python = trace::PythonFrames(trace_, trace_.Detail(c).python_stack);
  if (where.python.empty() && !probe().records().backwards.empty()) {
    // A call on autograd's own thread, which runs no Python: the program's backward() it ran under.
    if (const BackwardCall* backward = probe().BackwardAround(c.start_ns, c.thread_id)) {
      where.python = trace::PythonFrames(trace_, backward->stack);
    }
  }
  if (trace_.process.pid != 0) where.pid = trace_.process.pid;
  return where;
}

void CallSites::Add(size_t call, size_t group) {
  const trace::CallDetail& c = trace_.Detail(trace_.api_calls[call]);
  const trace::Backtrace* backtrace = trace_.FindBacktrace(c.backtrace);
  const uint64_t key = absl::HashOf(c.name, backtrace ? backtrace->frames : std::vector<trace::StringId>());
  auto [it, inserted] = by_key_.try_emplace(key, sites_.size());
  if (inserted) {
    sites_.push_back({call, 0, 0});
    last_group_.push_back(~size_t{0});
  }
  Site& site = sites_[it->second];
  ++site.calls;
  if (last_group_[it->second] != group) {
    ++site.groups;
    last_group_[it->second] = group;
  }
}

CallSites StepCallSites(const trace::Trace& trace, const std::vector<Iteration>& steps,
                        bool (*wanted)(const trace::Trace& trace, const trace::ApiCall& call)) {
  CallSites sites(trace);
  for (size_t s = 0; s < steps.size(); ++s) {
    for (size_t i = steps[s].first_call; i < steps[s].end_call; ++i) {
      const trace::ApiCall& call = trace.api_calls[i];
      if (call.capture_status == trace::CaptureStatus::kNone && wanted(trace, call)) sites.Add(i, s);
    }
  }
  return sites;
}

std::string DescribeCall(const trace::Trace& trace, size_t call) {
  const trace::ApiCall& c = trace.api_calls[call];
  const trace::CallDetail& d = trace.Detail(c);
  std::string text = absl::StrCat(trace.String(d.name), " on thread ", c.thread_id);
  if (c.stream_id != 0) absl::StrAppend(&text, ", stream ", c.stream_id);
  if (d.legacy_stream) absl::StrAppend(&text, " (legacy default stream)");
  return text;
}

}  // namespace graphcheck::analysis
