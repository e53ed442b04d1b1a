#include "trace/events.h"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"

namespace graphcheck::trace {

StringId Trace::Intern(absl::string_view s) {
  for (StringId id = 0; id < strings.size(); ++id) {
    if (strings[id] == s) return id;
  }
  strings.emplace_back(s);
  return static_cast<StringId>(strings.size() - 1);
}

bool CallDetail::operator==(const CallDetail& o) const {
  return name == o.name && domain == o.domain && legacy_stream == o.legacy_stream && direction == o.direction &&
         host_memory == o.host_memory && callback_id == o.callback_id && return_code == o.return_code &&
         backtrace == o.backtrace && python_stack == o.python_stack && kernel_name == o.kernel_name && grid == o.grid &&
         block == o.block && node_count == o.node_count && bytes == o.bytes && graph_id == o.graph_id &&
         other_stream_id == o.other_stream_id;
}

bool KernelShape::operator==(const KernelShape& o) const {
  return name == o.name && device == o.device && grid == o.grid && block == o.block && graph_node_id == o.graph_node_id;
}

namespace {

// The index of `value` in `table`, appended when new.
template <typename T>
uint32_t InternIn(const T& value, std::vector<T>* table, absl::flat_hash_map<T, uint32_t>* index) {
  auto [it, inserted] = index->try_emplace(value, static_cast<uint32_t>(table->size()));
  if (inserted) table->push_back(value);
  return it->second;
}

}  // namespace

ApiCall& Trace::AddCall(const ApiCallRecord& r) {
  ApiCall& call = api_calls.emplace_back();
  call.start_ns = r.start_ns;
  call.end_ns = r.end_ns;
  call.correlation_id = static_cast<uint32_t>(r.correlation_id);
  call.thread_id = r.thread_id;
  call.stream_id = static_cast<uint32_t>(r.stream_id);
  call.capture_id = static_cast<uint32_t>(r.capture_id);
  call.detail = InternIn(static_cast<const CallDetail&>(r), &call_details, &call_detail_index);
  call.kind = r.kind;
  call.capture_status = r.capture_status;
  call.capture_mode = r.capture_mode;
  return call;
}

KernelActivity& Trace::AddKernel(const KernelRecord& r) {
  KernelActivity& kernel = kernels.emplace_back();
  kernel.start_ns = r.start_ns;
  kernel.end_ns = r.end_ns;
  kernel.correlation_id = static_cast<uint32_t>(r.correlation_id);
  kernel.stream_id = static_cast<uint32_t>(r.stream_id);
  kernel.graph_id = r.graph_id;
  kernel.shape = InternIn(static_cast<const KernelShape&>(r), &kernel_shapes, &kernel_shape_index);
  return kernel;
}

ApiCallRecord Trace::Record(const ApiCall& call) const {
  ApiCallRecord r;
  static_cast<CallDetail&>(r) = Detail(call);
  r.correlation_id = call.correlation_id;
  r.start_ns = call.start_ns;
  r.end_ns = call.end_ns;
  r.thread_id = call.thread_id;
  r.kind = call.kind;
  r.stream_id = call.stream_id;
  r.capture_status = call.capture_status;
  r.capture_mode = call.capture_mode;
  r.capture_id = call.capture_id;
  return r;
}

KernelRecord Trace::Record(const KernelActivity& kernel) const {
  KernelRecord r;
  static_cast<KernelShape&>(r) = Shape(kernel);
  r.correlation_id = kernel.correlation_id;
  r.start_ns = kernel.start_ns;
  r.end_ns = kernel.end_ns;
  r.stream_id = kernel.stream_id;
  r.graph_id = kernel.graph_id;
  return r;
}

std::vector<std::string> Trace::BacktraceFrames(BacktraceId id) const {
  std::vector<std::string> frames;
  if (const Backtrace* backtrace = FindBacktrace(id)) {
    frames.reserve(backtrace->frames.size());
    for (StringId frame : backtrace->frames) frames.emplace_back(String(frame));
  }
  return frames;
}

bool Trace::LaunchesRecorded(uint64_t start_ns, uint64_t end_ns) const {
  if (recorder.launches != LaunchRecording::kSampled) return recorder.launches == LaunchRecording::kAll;
  // The last window that opens at or before start_ns must also cover end_ns.
  auto after = std::upper_bound(launch_windows.begin(), launch_windows.end(), start_ns,
                                [](uint64_t t, const LaunchWindow& w) { return t < w.start_ns; });
  return after != launch_windows.begin() && std::prev(after)->end_ns >= end_ns;
}

bool Trace::LaunchRecordingOverlaps(uint64_t start_ns, uint64_t end_ns) const {
  if (recorder.launches != LaunchRecording::kSampled) return recorder.launches == LaunchRecording::kAll;
  // Windows are sorted and disjoint: only the last one opening before end_ns can reach into the interval.
  auto after = std::upper_bound(launch_windows.begin(), launch_windows.end(), end_ns,
                                [](uint64_t t, const LaunchWindow& w) { return t <= w.start_ns; });
  return after != launch_windows.begin() && std::prev(after)->end_ns > start_ns;
}

absl::string_view LaunchRecordingName(LaunchRecording mode) {
  switch (mode) {
    case LaunchRecording::kAll:
      return "all";
    case LaunchRecording::kSampled:
      return "sampled";
    case LaunchRecording::kCaptureOnly:
      return "capture-only";
  }
  return "unknown";
}

absl::string_view ApiKindName(ApiKind kind) {
  switch (kind) {
    case ApiKind::kOther:
      return "other";
    case ApiKind::kKernelLaunch:
      return "kernel-launch";
    case ApiKind::kCaptureBegin:
      return "capture-begin";
    case ApiKind::kCaptureEnd:
      return "capture-end";
    case ApiKind::kStreamSynchronize:
      return "stream-synchronize";
    case ApiKind::kDeviceSynchronize:
      return "device-synchronize";
    case ApiKind::kEventSynchronize:
      return "event-synchronize";
    case ApiKind::kStreamQuery:
      return "stream-query";
    case ApiKind::kEventQuery:
      return "event-query";
    case ApiKind::kMemcpy:
      return "memcpy";
    case ApiKind::kMemcpyAsync:
      return "memcpy-async";
    case ApiKind::kMemset:
      return "memset";
    case ApiKind::kMemsetAsync:
      return "memset-async";
    case ApiKind::kMalloc:
      return "malloc";
    case ApiKind::kFree:
      return "free";
    case ApiKind::kHostAlloc:
      return "host-alloc";
    case ApiKind::kHostFree:
      return "host-free";
    case ApiKind::kMallocAsync:
      return "malloc-async";
    case ApiKind::kFreeAsync:
      return "free-async";
    case ApiKind::kStreamCreate:
      return "stream-create";
    case ApiKind::kStreamDestroy:
      return "stream-destroy";
    case ApiKind::kEventRecord:
      return "event-record";
    case ApiKind::kStreamWaitEvent:
      return "stream-wait-event";
    case ApiKind::kGraphCreate:
      return "graph-create";
    case ApiKind::kGraphInstantiate:
      return "graph-instantiate";
    case ApiKind::kGraphUpload:
      return "graph-upload";
    case ApiKind::kGraphLaunch:
      return "graph-launch";
    case ApiKind::kGraphDestroy:
      return "graph-destroy";
    case ApiKind::kGraphExecDestroy:
      return "graph-exec-destroy";
    case ApiKind::kModuleLoad:
      return "module-load";
    case ApiKind::kContextCreate:
      return "context-create";
  }
  return "unknown";
}

void DeriveGraphLaunches(Trace* trace) {
  if (!trace->graph_launches.empty()) return;
  // Nodes per source graph, from its capture end or instantiation: a launch's first that many kernels, copies and
  // memsets are its own.
  absl::flat_hash_map<uint64_t, uint32_t> nodes_of_graph;
  for (const ApiCall& call : trace->api_calls) {
    if (call.kind != ApiKind::kCaptureEnd && call.kind != ApiKind::kGraphInstantiate) continue;
    const CallDetail& detail = trace->Detail(call);
    if (detail.graph_id != 0 && detail.node_count != 0) nodes_of_graph[detail.graph_id] = detail.node_count;
  }
  struct Interval {
    uint64_t start_ns, end_ns;
    uint64_t node = 0;  // the kernel's graph node id; 0 for copies and memsets, or unknown
    bool operator<(const Interval& o) const { return start_ns < o.start_ns; }
  };
  struct Launch {
    GraphLaunchActivity activity;
    uint32_t nodes = 0;  // 0: unknown
    std::vector<Interval> intervals;
  };
  std::vector<Launch> launches;
  absl::flat_hash_map<uint64_t, size_t> launch_of;  // correlation id -> index into launches
  for (const ApiCall& call : trace->api_calls) {
    const CallDetail& detail = trace->Detail(call);
    if (call.kind != ApiKind::kGraphLaunch || call.correlation_id == 0 || detail.return_code != 0) continue;
    Launch launch;
    launch.activity.correlation_id = call.correlation_id;
    launch.activity.stream_id = call.stream_id;
    if (auto it = nodes_of_graph.find(detail.graph_id); it != nodes_of_graph.end()) launch.nodes = it->second;
    launch_of.emplace(call.correlation_id, launches.size());
    launches.push_back(std::move(launch));
  }
  if (launch_of.empty()) return;
  for (const KernelActivity& kernel : trace->kernels) {
    auto it = launch_of.find(kernel.correlation_id);
    if (it == launch_of.end()) continue;
    Launch& launch = launches[it->second];
    const KernelShape& shape = trace->Shape(kernel);
    if (launch.intervals.empty()) {
      launch.activity.device = shape.device;
      launch.activity.graph_id = kernel.graph_id;
    }
    launch.intervals.push_back({kernel.start_ns, kernel.end_ns, shape.graph_node_id});
  }
  for (const MemoryActivity& memory : trace->memory) {
    auto it = launch_of.find(memory.correlation_id);
    if (it != launch_of.end() && !launches[it->second].intervals.empty()) {
      launches[it->second].intervals.push_back({memory.start_ns, memory.end_ns, 0});
    }
  }
  absl::flat_hash_set<uint64_t> seen;  // graph nodes of the launch at hand
  for (Launch& launch : launches) {
    // Launches whose kernels were not recorded (activity off, or lost) have no GPU interval.
    if (launch.intervals.empty()) continue;
    // Replays launched after a launch-recording window closed, of graphs instantiated inside it, still produce kernel
    // records, carrying the correlation id of the last launch that was recorded (seen on an H100 with CUDA 13: one
    // recorded launch spanned the 59 ms of every later replay). They come after the launch's own nodes: its records
    // end before a graph node repeats, and after the graph's node count.
    std::sort(launch.intervals.begin(), launch.intervals.end());
    seen.clear();
    size_t own = 0;
    while (own < launch.intervals.size() && (launch.nodes == 0 || own < launch.nodes)) {
      const uint64_t node = launch.intervals[own].node;
      if (node != 0 && !seen.insert(node).second) break;
      ++own;
    }
    launch.intervals.resize(own);
    launch.activity.start_ns = launch.intervals.front().start_ns;
    for (const Interval& interval : launch.intervals) {
      launch.activity.end_ns = std::max(launch.activity.end_ns, interval.end_ns);
    }
    trace->graph_launches.push_back(launch.activity);
  }
  std::sort(trace->graph_launches.begin(), trace->graph_launches.end(),
            [](const GraphLaunchActivity& a, const GraphLaunchActivity& b) { return a.start_ns < b.start_ns; });
}

absl::string_view LossKindName(LossKind kind) {
  switch (kind) {
    case LossKind::kActivityDropped:
      return "activity-dropped";
    case LossKind::kWriterDropped:
      return "writer-dropped";
    case LossKind::kLaunchExitLost:
      return "launch-exit-lost";
    case LossKind::kCallError:
      return "call-error";
    case LossKind::kActivityBufferFailed:
      return "activity-buffer-failed";
  }
  return "unknown";
}

double HostValueNumber(uint64_t bits) {
  double value;
  static_assert(sizeof(value) == sizeof(bits));
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

absl::string_view ProbeEventKindName(ProbeEventKind kind) {
  switch (kind) {
    case ProbeEventKind::kCaptureBegin:
      return "capture-begin";
    case ProbeEventKind::kCaptureEnd:
      return "capture-end";
    case ProbeEventKind::kCaptureException:
      return "capture-exception";
    case ProbeEventKind::kCompileSkip:
      return "compile-skip";
    case ProbeEventKind::kOutputsInvalidated:
      return "outputs-invalidated";
    case ProbeEventKind::kUncaughtException:
      return "uncaught-exception";
    case ProbeEventKind::kStateRebound:
      return "state-rebound";
    case ProbeEventKind::kOutputsHeld:
      return "outputs-held";
    case ProbeEventKind::kDdpConstructed:
      return "ddp-constructed";
    case ProbeEventKind::kDdpCapturedForward:
      return "ddp-captured-forward";
    case ProbeEventKind::kHostValueChanged:
      return "host-value-changed";
    case ProbeEventKind::kInputShapeChanged:
      return "input-shape-changed";
    case ProbeEventKind::kAuditBegin:
      return "audit-begin";
    case ProbeEventKind::kAuditEnd:
      return "audit-end";
    case ProbeEventKind::kShadowSkipped:
      return "shadow-skipped";
    case ProbeEventKind::kWaitBegin:
      return "wait-begin";
    case ProbeEventKind::kWaitEnd:
      return "wait-end";
    case ProbeEventKind::kGraphAlive:
      return "graph-alive";
    case ProbeEventKind::kMegatronGraphRecorded:
      return "megatron-graph-recorded";
    case ProbeEventKind::kGraphTensors:
      return "graph-tensors";
    case ProbeEventKind::kTrainingModeChanged:
      return "training-mode-changed";
    case ProbeEventKind::kHostRandomDraw:
      return "host-random-draw";
    case ProbeEventKind::kGradAliased:
      return "grad-aliased";
    case ProbeEventKind::kTensorReleased:
      return "tensor-released";
    case ProbeEventKind::kModuleCallBegin:
      return "module-call-begin";
    case ProbeEventKind::kModuleCallEnd:
      return "module-call-end";
    case ProbeEventKind::kBackwardBegin:
      return "backward-begin";
    case ProbeEventKind::kBackwardEnd:
      return "backward-end";
    case ProbeEventKind::kProgramStep:
      return "program-step";
    case ProbeEventKind::kStateMadeInCapture:
      return "state-made-in-capture";
  }
  return "unknown";
}

absl::string_view Trace::ThreadNameOf(uint32_t thread_id) const {
  for (const ThreadName& thread : thread_names) {
    if (thread.thread_id == thread_id) return String(thread.name);
  }
  return "";
}

absl::string_view ProbeOriginName(ProbeOrigin origin) {
  switch (origin) {
    case ProbeOrigin::kUnknown:
      return "unknown";
    case ProbeOrigin::kUser:
      return "user";
    case ProbeOrigin::kGraphedCallables:
      return "make_graphed_callables";
    case ProbeOrigin::kCudagraphTrees:
      return "cudagraph-trees";
    case ProbeOrigin::kCudagraphTreesInit:
      return "cudagraph-trees-init";
    case ProbeOrigin::kTransformerEngine:
      return "transformer-engine";
    case ProbeOrigin::kMegatron:
      return "megatron";
    case ProbeOrigin::kMegatronFullIteration:
      return "megatron-full-iteration";
  }
  return "unknown";
}

}  // namespace graphcheck::trace
