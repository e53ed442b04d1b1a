// Events of the Python probe (python/probe/graphcheck_probe): the probe calls graphcheck_probe_event, under --shadow
// graphcheck_probe_shadow, and at exit graphcheck_probe_allocations (injection.cc) through ctypes, and the recorder
// writes them into the process's trace on its own clock and thread ids, so they interleave with the CUDA calls they
// explain. Exceptions come with the frames of their traceback (the raise site), a backward's comparisons with the
// frames of the thread that called the backward; every other event with the calling thread's Python stack, taken as
// for CUDA calls.
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "capture/internal/recorder_state.h"

namespace graphcheck::capture::internal {
namespace {

// Explicit frames as the probe sends them: "file\x1fline\x1ffunction" records joined by \x1e, innermost first.
constexpr char kFieldSeparator = '\x1f';
constexpr char kFrameSeparator = '\x1e';
constexpr size_t kMaxProbeText = 4096;  // bytes of a message kept (an exception text can hold a whole tensor)
constexpr size_t kMaxTensorListText = size_t{1} << 20;  // bytes of a graph's named tensors (bridge.MAX_TENSOR_LIST)

trace::StringId Text(trace::TraceWriter& writer, const char* s, size_t limit = kMaxProbeText) {
  return s == nullptr ? trace::StringId{0} : writer.InternString(absl::string_view(s).substr(0, limit));
}

}  // namespace

trace::PythonStackId Recorder::ProbeStack(const char* frames) {
  if (frames == nullptr) return CapturePythonStack();
  std::vector<trace::PythonFrameRef> parsed;
  for (absl::string_view frame : absl::StrSplit(frames, kFrameSeparator, absl::SkipEmpty())) {
    if (parsed.size() == kMaxPythonFrames) break;
    const std::vector<absl::string_view> fields = absl::StrSplit(frame, kFieldSeparator);
    if (fields.size() != 3) continue;
    uint32_t line = 0;
    if (!absl::SimpleAtoi(fields[1], &line)) line = 0;
    parsed.push_back({writer_->InternString(fields[0]), line, writer_->InternString(fields[2])});
  }
  return writer_->AddPythonStack(parsed);
}

int Recorder::OnShadowComparison(const GraphcheckShadowRecord& record) {
  if (writer_ == nullptr || record.subject > static_cast<uint8_t>(trace::kMaxShadowSubject)) return 0;
  trace::ShadowComparison comparison;
  comparison.thread_id = CurrentThreadId();
  comparison.time_ns = Timestamp();
  comparison.module = record.module;
  comparison.call = record.call;
  comparison.numel = static_cast<int64_t>(record.numel);
  comparison.max_abs_error = record.max_abs_error;
  comparison.worst_index = record.worst_index;
  comparison.eager_at_worst = record.eager_at_worst;
  comparison.graphed_at_worst = record.graphed_at_worst;
  comparison.eager_abs_max = record.eager_abs_max;
  comparison.eager_spread = record.eager_spread;
  comparison.eager_nonfinite = static_cast<int64_t>(record.eager_nonfinite);
  comparison.graphed_nonfinite = static_cast<int64_t>(record.graphed_nonfinite);
  comparison.random = record.random != 0;
  comparison.subject = static_cast<trace::ShadowSubject>(record.subject);
  comparison.shadow_ns = record.shadow_ns;
  comparison.module_type = Text(*writer_, record.module_type);
  comparison.name = Text(*writer_, record.name);
  comparison.dtype = Text(*writer_, record.dtype);
  comparison.precision = Text(*writer_, record.precision);
  comparison.draws = Text(*writer_, record.draws);
  comparison.stack = ProbeStack(record.frames);
  writer_->WriteShadowComparison(comparison);
  return 1;
}

int64_t Recorder::OnAllocatorHistory(const GraphcheckAllocations& batch) {
  if (writer_ == nullptr) return 0;
  // The allocator stamps its history with the wall clock in microseconds; the probe sent its own wall clock with the
  // batch, and the recorder's clock is read here, a few microseconds later: their difference moves every entry.
  const uint64_t now_ns = Timestamp();
  if (now_ns == 0) return 0;
  const int64_t offset_ns = static_cast<int64_t>(now_ns) - static_cast<int64_t>(batch.now_us * 1000);
  constexpr uint32_t kMaxAction = static_cast<uint32_t>(trace::AllocatorEvent::Action::kFree);
  int64_t written = 0;
  for (uint64_t i = 0; i < batch.count; ++i) {
    const GraphcheckAllocation& entry = batch.records[i];
    if (entry.action > kMaxAction) continue;
    trace::AllocatorEvent event;
    event.action = static_cast<trace::AllocatorEvent::Action>(entry.action);
    event.device = entry.device;
    event.time_ns = static_cast<uint64_t>(static_cast<int64_t>(entry.time_us * 1000) + offset_ns);
    event.address = entry.address;
    event.bytes = entry.bytes;
    writer_->WriteAllocation(event);
    ++written;
  }
  return written;
}

int Recorder::OnProbeEvent(const GraphcheckProbeEvent& args) {
  if (writer_ == nullptr || args.kind < 1 || args.kind > trace::kMaxProbeEventKind || args.origin < 0 ||
      args.origin > trace::kMaxProbeOrigin) {
    return 0;
  }
  trace::ProbeEvent event;
  event.kind = static_cast<trace::ProbeEventKind>(args.kind);
  event.origin = static_cast<trace::ProbeOrigin>(args.origin);
  event.thread_id = CurrentThreadId();
  event.time_ns = Timestamp();
  event.graph = args.graph;
  event.pool = args.pool;
  event.value = args.value;
  event.value_now = args.value_now;
  event.type = Text(*writer_, args.type);
  event.text = Text(*writer_, args.text,
                    event.kind == trace::ProbeEventKind::kGraphTensors ? kMaxTensorListText : kMaxProbeText);
  event.stack = ProbeStack(args.frames);
  // `graphcheck plan` times a module call from its begin: stamped after the stack is taken, the span leaves it out.
  if (event.kind == trace::ProbeEventKind::kModuleCallBegin) event.time_ns = Timestamp();
  writer_->WriteProbeEvent(event);
  if (hang_watch_ != nullptr) WatchProbeWait(event);
  return 1;
}

void Recorder::WatchProbeWait(const trace::ProbeEvent& event) {
  if (event.kind == trace::ProbeEventKind::kWaitEnd) {
    hang_watch_->Exit();
  } else if (event.kind == trace::ProbeEventKind::kWaitBegin) {
    HangWatch::Wait wait;
    wait.thread_id = event.thread_id;
    wait.call = event.text;
    wait.call_name = "a wait the Python probe announced";
    wait.since_ns = event.time_ns;
    wait.last_graph_id = t_state.last_graph_launched;
    wait.python_stack = event.stack;
    hang_watch_->Enter(wait);
  }
}

}  // namespace graphcheck::capture::internal
