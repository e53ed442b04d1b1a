// Decoders for the records that format.h encodes. Each checks every read and every enum range, so damaged bytes make
// the decoder return false rather than produce a record with impossible values.
#include "trace/internal/format.h"

#include <limits>

#include "trace/kept_string.h"

namespace graphcheck::trace::internal {
namespace {

constexpr uint64_t kU32 = std::numeric_limits<uint32_t>::max();
constexpr uint64_t kI64 = std::numeric_limits<int64_t>::max();  // counts kept as int64_t

template <typename T>
bool Enum(Decoder& d, T* out, uint8_t min, uint8_t max) {
  uint8_t b;
  if (!d.Byte(&b) || b < min || b > max) return false;
  *out = static_cast<T>(b);
  return true;
}

bool Finish(const Decoder& d, bool lenient) { return d.ok() && (lenient || d.remaining() == 0); }

bool Int32(Decoder& d, int32_t* out) {
  int64_t v;
  if (!d.Signed(&v) || v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()) {
    return false;
  }
  *out = static_cast<int32_t>(v);
  return true;
}

// A string the record holds itself, cut as the string table's are (kept_string.h).
bool OwnedString(Decoder& d, std::string* out) {
  absl::string_view s;
  if (!d.String(&s)) return false;
  *out = KeptString(s);
  return true;
}

bool Timed(Decoder& d, DeltaState& s, uint64_t* correlation, uint64_t* start, uint64_t* end) {
  uint64_t dc, ds, de;
  if (!d.Varint(&dc) || !d.Varint(&ds) || !d.Varint(&de)) return false;
  *correlation = s.correlation = ApplyDelta(s.correlation, dc);
  *start = s.time = ApplyDelta(s.time, ds);
  *end = ApplyDelta(*start, de);
  return true;
}

bool Thread(Decoder& d, DeltaState& s, uint32_t* thread) {
  uint64_t delta;
  if (!d.Varint(&delta)) return false;
  const uint64_t value = ApplyDelta(s.thread, delta);
  if (value > kU32) return false;
  *thread = static_cast<uint32_t>(value);
  s.thread = value;
  return true;
}

bool Dims(Decoder& d, std::array<uint32_t, 3>* grid, std::array<uint32_t, 3>* block) {
  for (uint32_t& v : *grid) {
    if (!d.Varint(&v, kU32)) return false;
  }
  for (uint32_t& v : *block) {
    if (!d.Varint(&v, kU32)) return false;
  }
  return true;
}

bool MemoryKind(Decoder& d, MemcpyDirection* direction, HostMemory* host) {
  uint8_t b;
  if (!d.Byte(&b)) return false;
  const uint8_t dir = b & 0x0f, mem = b >> 4;
  if (dir > static_cast<uint8_t>(MemcpyDirection::kDefault) || mem > static_cast<uint8_t>(HostMemory::kUnknown)) {
    return false;
  }
  *direction = static_cast<MemcpyDirection>(dir);
  *host = static_cast<HostMemory>(mem);
  return true;
}

bool Gpu(Decoder& d, GpuInfo* gpu) {
  return OwnedString(d, &gpu->name) && Int32(d, &gpu->cc_major) && Int32(d, &gpu->cc_minor) &&
         OwnedString(d, &gpu->driver);
}

}  // namespace

absl::string_view RecordTypeName(uint8_t type) {
  switch (static_cast<RecordType>(type)) {
    case RecordType::kProcess:
      return "process";
    case RecordType::kString:
      return "string";
    case RecordType::kBacktrace:
      return "backtrace";
    case RecordType::kApiCall:
      return "api-call";
    case RecordType::kKernel:
      return "kernel";
    case RecordType::kMemory:
      return "memory";
    case RecordType::kGraphLaunch:
      return "graph-launch";
    case RecordType::kNvtx:
      return "nvtx";
    case RecordType::kDevice:
      return "device";
    case RecordType::kEnvironment:
      return "environment";
    case RecordType::kRecorderStatus:
      return "recorder-status";
    case RecordType::kLaunchWindowEdge:
      return "launch-window-edge";
    case RecordType::kPythonStack:
      return "python-stack";
    case RecordType::kRecorderError:
      return "recorder-error";
    case RecordType::kProbeEvent:
      return "probe-event";
    case RecordType::kShadowComparison:
      return "shadow-comparison";
    case RecordType::kHang:
      return "hang";
    case RecordType::kThreadName:
      return "thread-name";
    case RecordType::kAllocation:
      return "allocation";
    case RecordType::kGraphManifest:
      return "graph-manifest";
  }
  return "unknown";
}

bool DecodeApiCall(absl::string_view payload, bool lenient, DeltaState& s, ApiCallRecord* c) {
  Decoder d(payload);
  uint8_t flags;
  uint32_t present;
  if (!Timed(d, s, &c->correlation_id, &c->start_ns, &c->end_ns) || !Thread(d, s, &c->thread_id) ||
      !d.Varint(&c->name, kU32) || !Enum(d, &c->domain, 1, 2) ||
      !Enum(d, &c->kind, 0, static_cast<uint8_t>(ApiKind::kContextCreate)) || !d.Varint(&c->callback_id, kU32) ||
      !Int32(d, &c->return_code) || !d.Varint(&c->stream_id) || !d.Byte(&flags) ||
      !d.Varint(&present, kApiKnownPresence)) {
    return false;
  }
  const uint8_t status = (flags >> 1) & 3, mode = (flags >> 3) & 3;
  if ((flags >> 5) != 0 || status > static_cast<uint8_t>(CaptureStatus::kInvalidated)) return false;
  c->legacy_stream = (flags & kApiLegacyStream) != 0;
  c->capture_status = static_cast<CaptureStatus>(status);
  c->capture_mode = static_cast<CaptureMode>(mode);
  if ((present & kApiHasCaptureId) && !d.Varint(&c->capture_id)) return false;
  if ((present & kApiHasBacktrace) && !d.Varint(&c->backtrace, kU32)) return false;
  if ((present & kApiHasBytes) && !d.Varint(&c->bytes)) return false;
  if ((present & kApiHasMemoryKind) && !MemoryKind(d, &c->direction, &c->host_memory)) return false;
  if ((present & kApiHasKernelName) && !d.Varint(&c->kernel_name, kU32)) return false;
  if ((present & kApiHasDims) && !Dims(d, &c->grid, &c->block)) return false;
  if ((present & kApiHasGraphId) && !d.Varint(&c->graph_id)) return false;
  if ((present & kApiHasNodeCount) && !d.Varint(&c->node_count, kU32)) return false;
  if ((present & kApiHasOtherStream) && !d.Varint(&c->other_stream_id)) return false;
  if (d.remaining() > 0 && !d.Varint(&c->python_stack, kU32)) return false;  // since 1.2
  return Finish(d, lenient);
}

bool DecodeKernel(absl::string_view payload, bool lenient, DeltaState& s, KernelRecord* k) {
  Decoder d(payload);
  return Timed(d, s, &k->correlation_id, &k->start_ns, &k->end_ns) && d.Varint(&k->device, kU32) &&
         d.Varint(&k->stream_id) && d.Varint(&k->graph_id, kU32) && d.Varint(&k->graph_node_id) &&
         d.Varint(&k->name, kU32) && Dims(d, &k->grid, &k->block) && Finish(d, lenient);
}

bool DecodeMemory(absl::string_view payload, bool lenient, DeltaState& s, MemoryActivity* m) {
  Decoder d(payload);
  return Enum(d, &m->kind, 0, static_cast<uint8_t>(MemoryActivity::Kind::kMemset)) &&
         Timed(d, s, &m->correlation_id, &m->start_ns, &m->end_ns) && d.Varint(&m->device, kU32) &&
         d.Varint(&m->stream_id) && d.Varint(&m->graph_id, kU32) && d.Varint(&m->bytes) &&
         MemoryKind(d, &m->direction, &m->host_memory) && Finish(d, lenient);
}

bool DecodeAllocation(absl::string_view payload, bool lenient, DeltaState& s, AllocatorEvent* a) {
  Decoder d(payload);
  uint64_t delta = 0;
  if (!Enum(d, &a->action, 0, static_cast<uint8_t>(AllocatorEvent::Action::kFree)) || !d.Varint(&a->device, kU32) ||
      !d.Varint(&delta)) {
    return false;
  }
  a->time_ns = s.time = ApplyDelta(s.time, delta);
  return d.Varint(&a->address) && d.Varint(&a->bytes) && Finish(d, lenient);
}

bool DecodeGraphLaunch(absl::string_view payload, bool lenient, DeltaState& s, GraphLaunchActivity* g) {
  Decoder d(payload);
  return Timed(d, s, &g->correlation_id, &g->start_ns, &g->end_ns) && d.Varint(&g->device, kU32) &&
         d.Varint(&g->stream_id) && d.Varint(&g->graph_id, kU32) && Finish(d, lenient);
}

bool DecodeNvtx(absl::string_view payload, bool lenient, DeltaState& s, NvtxEvent* n) {
  Decoder d(payload);
  uint64_t dt;
  if (!Enum(d, &n->kind, 0, static_cast<uint8_t>(NvtxEvent::Kind::kMark)) || !Thread(d, s, &n->thread_id) ||
      !d.Varint(&dt)) {
    return false;
  }
  n->time_ns = s.time = ApplyDelta(s.time, dt);
  return d.Varint(&n->domain, kU32) && d.Varint(&n->message, kU32) && d.Varint(&n->range_id) &&
         (d.remaining() == 0 || d.Varint(&n->communicator)) && Finish(d, lenient);  // since 1.13
}

bool DecodeString(absl::string_view payload, StringId* id, absl::string_view* s) {
  Decoder d(payload);
  if (!d.Varint(id, kU32) || *id == 0) return false;
  *s = d.Rest();
  return true;
}

bool DecodeBacktrace(absl::string_view payload, bool lenient, BacktraceId* id, Backtrace* out) {
  Decoder d(payload);
  uint64_t count;
  // Each frame takes at least one byte, which bounds the allocation by the payload size.
  if (!d.Varint(id, kU32) || *id == 0 || !d.Varint(&count) || count > d.remaining()) return false;
  out->frames.resize(count);
  for (StringId& frame : out->frames) {
    if (!d.Varint(&frame, kU32)) return false;
  }
  return Finish(d, lenient);
}

bool DecodePythonStack(absl::string_view payload, bool lenient, PythonStackId* id, PythonStack* out) {
  Decoder d(payload);
  uint64_t count;
  // Each frame takes at least three bytes, which bounds the allocation by the payload size.
  if (!d.Varint(id, kU32) || *id == 0 || !d.Varint(&count) || count > d.remaining() / 3) return false;
  out->frames.resize(count);
  for (PythonFrameRef& frame : out->frames) {
    if (!d.Varint(&frame.file, kU32) || !d.Varint(&frame.line, kU32) || !d.Varint(&frame.function, kU32)) return false;
  }
  return Finish(d, lenient);
}

bool DecodeProcess(absl::string_view payload, bool lenient, ProcessInfo* p) {
  Decoder d(payload);
  uint64_t argc;
  if (!d.Varint(&p->pid, kU32) || !d.Varint(&p->parent_pid, kU32) || !Int32(d, &p->rank) || !Int32(d, &p->local_rank) ||
      !Int32(d, &p->world_size) || !d.Varint(&p->start_ns) || !OwnedString(d, &p->hostname) || !d.Varint(&argc) ||
      argc > d.remaining()) {
    return false;
  }
  p->command_line.resize(argc);
  for (std::string& arg : p->command_line) {
    if (!OwnedString(d, &arg)) return false;
  }
  return Finish(d, lenient);
}

bool DecodeDevice(absl::string_view payload, bool lenient, DeviceInfo* out) {
  Decoder d(payload);
  return d.Varint(&out->index, kU32) && Gpu(d, &out->gpu) && Finish(d, lenient);
}

bool DecodeEnvironment(absl::string_view payload, bool lenient, Environment* out) {
  Decoder d(payload);
  uint64_t count;
  if (!d.Varint(&count) || count > d.remaining()) return false;
  Environment env;
  for (uint64_t i = 0; i < count; ++i) {
    absl::string_view name, value;
    if (!d.String(&name) || !d.String(&value)) return false;
    env.Set(KeptString(name), KeptString(value));
  }
  uint8_t has_gpu;
  if (!d.Byte(&has_gpu) || has_gpu > 1) return false;
  if (has_gpu == 1) {
    GpuInfo gpu;
    if (!Gpu(d, &gpu)) return false;
    env.set_gpu(std::move(gpu));
  }
  if (!Finish(d, lenient)) return false;
  *out = std::move(env);
  return true;
}

bool DecodeRecorderStatus(absl::string_view payload, bool lenient, RecorderStatus* out) {
  Decoder d(payload);
  uint8_t subscribed;
  if (!d.Byte(&subscribed) || subscribed > 1) return false;
  out->subscribed = subscribed == 1;
  if (!OwnedString(d, &out->other_subscriber) || !OwnedString(d, &out->message)) return false;
  out->launches = LaunchRecording::kAll;  // a 1.0 trace ends here
  if (d.remaining() > 0 && !Enum(d, &out->launches, 0, static_cast<uint8_t>(LaunchRecording::kCaptureOnly))) {
    return false;
  }
  return Finish(d, lenient);
}

bool DecodeRecorderError(absl::string_view payload, bool lenient, RecorderError* out) {
  Decoder d(payload);
  return Enum(d, &out->kind, 0, kLossKinds - 1) && d.Varint(&out->time_ns) && d.Varint(&out->count) &&
         d.Varint(&out->call, kU32) && Int32(d, &out->code) && d.Varint(&out->context_id, kU32) &&
         d.Varint(&out->stream_id) && Finish(d, lenient);
}

bool DecodeProbeEvent(absl::string_view payload, bool lenient, ProbeEvent* out) {
  Decoder d(payload);
  return Enum(d, &out->kind, 1, kMaxProbeEventKind) && Enum(d, &out->origin, 0, kMaxProbeOrigin) &&
         d.Varint(&out->thread_id, kU32) && d.Varint(&out->time_ns) && d.Varint(&out->graph) && d.Varint(&out->pool) &&
         d.Varint(&out->value) && d.Varint(&out->type, kU32) && d.Varint(&out->text, kU32) &&
         d.Varint(&out->stack, kU32) && (d.remaining() == 0 || d.Varint(&out->value_now)) &&  // since 1.4
         Finish(d, lenient);
}

bool DecodeShadowComparison(absl::string_view payload, bool lenient, ShadowComparison* out) {
  Decoder d(payload);
  uint8_t random;
  if (!(d.Varint(&out->thread_id, kU32) && d.Varint(&out->time_ns) && d.Varint(&out->module) &&
        d.Varint(&out->module_type, kU32) && d.Varint(&out->call, kU32) && d.Varint(&out->name, kU32) &&
        d.Varint(&out->dtype, kU32) && d.Varint(&out->precision, kU32) && d.Varint(&out->stack, kU32) &&
        d.Varint(&out->numel, kI64) && d.Double(&out->max_abs_error) && d.Signed(&out->worst_index) &&
        d.Double(&out->eager_at_worst) && d.Double(&out->graphed_at_worst) && d.Double(&out->eager_abs_max) &&
        d.Double(&out->eager_spread) && d.Varint(&out->eager_nonfinite, kI64) &&
        d.Varint(&out->graphed_nonfinite, kI64) && d.Byte(&random) && random <= 1 && d.Varint(&out->shadow_ns))) {
    return false;
  }
  out->random = random == 1;
  if (d.remaining() > 0 && !(Enum(d, &out->subject, 0, kMaxShadowSubject) && d.Varint(&out->draws, kU32))) {
    return false;  // since 1.8
  }
  return Finish(d, lenient);
}

bool DecodeHang(absl::string_view payload, bool lenient, Hang* out) {
  Decoder d(payload);
  return d.Varint(&out->thread_id, kU32) && d.Varint(&out->time_ns) && d.Varint(&out->since_ns) &&
         d.Varint(&out->timeout_ns) && d.Varint(&out->call, kU32) && d.Varint(&out->stream_id) &&
         d.Varint(&out->last_graph_id, kU32) && d.Varint(&out->stack, kU32) && Finish(d, lenient);
}

bool DecodeThreadName(absl::string_view payload, bool lenient, ThreadName* out) {
  Decoder d(payload);
  return d.Varint(&out->thread_id, kU32) && d.Varint(&out->name, kU32) && Finish(d, lenient);
}

bool DecodeGraphManifest(absl::string_view payload, bool lenient, GraphManifest* out) {
  Decoder d(payload);
  uint64_t count = 0;
  if (!(d.Varint(&out->thread_id, kU32) && d.Varint(&out->time_ns) && d.Varint(&out->graph_id, kU32) &&
        d.Varint(&out->kernel_nodes, kU32) && d.Varint(&out->copy_nodes, kU32) && d.Varint(&out->set_nodes, kU32) &&
        d.Varint(&out->other_nodes, kU32) && d.Varint(&out->unread_nodes, kU32) &&
        d.Varint(&out->unread_reason, kU32) && d.Varint(&out->uses_left_out, kU32) && d.Varint(&out->read_ns) &&
        d.Varint(&count, kMaxGraphMemoryUses) && count * 3 <= d.remaining())) {  // a use takes at least 3 bytes
    return false;
  }
  out->uses.resize(count);
  uint64_t previous = 0;
  for (GraphMemoryUse& use : out->uses) {
    uint64_t delta;
    if (!Enum(d, &use.access, 0, kMaxGraphMemoryAccess) || !d.Varint(&delta) || !d.Varint(&use.bytes)) return false;
    use.address = previous = ApplyDelta(previous, delta);
  }
  return Finish(d, lenient);
}

bool DecodeLaunchWindowEdge(absl::string_view payload, bool lenient, WindowEdge* edge, uint64_t* time_ns) {
  Decoder d(payload);
  return Enum(d, edge, 0, static_cast<uint8_t>(WindowEdge::kClose)) && d.Varint(time_ns) && Finish(d, lenient);
}

}  // namespace graphcheck::trace::internal
