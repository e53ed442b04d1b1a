// The trace file layout shared by TraceWriter and the reader: file header, chunk header, record types and the
// encoding of every record (docs/trace-format.md is the prose version; keep the two in step and bump the version on
// any change). Encoders are inline templates because the writer's hot path (API calls, kernels) runs them for
// every CUDA call; decoders live in format.cc.
#ifndef GRAPHCHECK_TRACE_INTERNAL_FORMAT_H_
#define GRAPHCHECK_TRACE_INTERNAL_FORMAT_H_

#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "trace/events.h"
#include "trace/internal/varint.h"

namespace graphcheck::trace::internal {

// ---- File header: 64 bytes at offset 0, little-endian. ----
inline constexpr char kFileMagic[8] = {'G', 'C', 'T', 'R', 'A', 'C', 'E', '\0'};
inline constexpr uint16_t kMajorVersion = 1;   // readers refuse other majors
inline constexpr uint16_t kMinorVersion = 16;  // newer minors only add record types / trailing record fields
inline constexpr size_t kFileHeaderBytes = 64;
inline constexpr size_t kFileMagicOffset = 0;
inline constexpr size_t kMajorOffset = 8;        // u16
inline constexpr size_t kMinorOffset = 10;       // u16
inline constexpr size_t kDataOffsetOffset = 12;  // u32: where the first chunk starts (a page-size multiple)
inline constexpr size_t kChunkBytesOffset = 16;  // u32: chunk granularity; every chunk is a multiple of it
inline constexpr size_t kWriterPidOffset = 20;   // u32
inline constexpr size_t kCreatedOffset = 24;     // u64: wall clock (CLOCK_REALTIME ns) when the file was created
// Since 1.2, updated in place through the mapping while the process runs:
inline constexpr size_t kEndStateOffset = 32;       // u32: TraceEnd (1 running, 2 stopped cleanly, 3 crashed)
inline constexpr size_t kEndSignalOffset = 36;      // u32: the crash signal
inline constexpr size_t kEndTimeOffset = 40;        // u64: wall clock (CLOCK_REALTIME ns) of the end
inline constexpr size_t kExpectedBytesOffset = 48;  // u64: the file's length as the writer made it

// ---- Loss table (since 1.2): in the first page, after the file header. ----
inline constexpr size_t kLossCountOffset = 64;  // u32: number of entries (readers take the ones they know)
inline constexpr size_t kLossTableOffset = 72;  // entries of 24 bytes: u64 count, u64 first_ns, u64 last_ns
inline constexpr size_t kLossEntryBytes = 24;
inline constexpr size_t kLossCountField = 0;
inline constexpr size_t kLossFirstField = 8;
inline constexpr size_t kLossLastField = 16;

// ---- Chunk header: 32 bytes at the start of each chunk. ----
// The largest chunk a writer takes and a reader accepts (a record larger than this is dropped and counted), so a
// damaged capacity field can never make the reader allocate more.
inline constexpr uint64_t kMaxChunkBytes = uint64_t{64} << 20;
inline constexpr uint32_t kChunkMagic = 0x4b434347;  // "GCCK"
inline constexpr size_t kChunkHeaderBytes = 32;
inline constexpr size_t kChunkMagicOffset = 0;       // u32
inline constexpr size_t kChunkCapacityOffset = 8;    // u64: whole chunk incl. header, a multiple of chunk granularity
inline constexpr size_t kChunkThreadOffset = 16;     // u32: OS thread id of the thread that took the chunk
inline constexpr size_t kChunkSequenceOffset = 20;   // u32: order in which chunks were taken
inline constexpr size_t kChunkCommittedOffset = 24;  // u64: payload bytes after the header holding whole records

// ---- Records: u8 type, varint payload length, payload. ----
enum class RecordType : uint8_t {
  kProcess = 1,
  kString = 2,
  kBacktrace = 3,
  kApiCall = 4,
  kKernel = 5,
  kMemory = 6,
  kGraphLaunch = 7,
  kNvtx = 8,
  kDevice = 9,
  kEnvironment = 10,
  kRecorderStatus = 11,
  kLaunchWindowEdge = 12,  // since 1.1
  // Recorder records 13-19 (since 1.2).
  kPythonStack = 13,
  kRecorderError = 14,
  kProbeEvent = 15,        // since 1.3
  kShadowComparison = 16,  // since 1.6
  kHang = 17,              // since 1.6
  kThreadName = 18,        // since 1.7
  kAllocation = 19,        // since 1.9
  kGraphManifest = 20,     // since 1.10
};
inline constexpr uint8_t kMaxRecordType = 20;
absl::string_view RecordTypeName(uint8_t type);

// Hot records (API calls, activity, NVTX) are bounded: every field is at most a 10-byte varint. The writer encodes
// them into a stack buffer of this size, then copies header and payload into the chunk.
inline constexpr size_t kMaxHotPayloadBytes = 256;
inline constexpr size_t kMaxRecordHeaderBytes = 1 + kMaxVarintBytes;

// Times, correlation ids and thread ids are stored as zigzag deltas from the previous hot record in the same chunk,
// so the state resets at every chunk start and a chunk decodes on its own.
struct DeltaState {
  uint64_t time = 0;
  uint64_t correlation = 0;
  uint64_t thread = 0;
};

// ApiCall: bits of its `flags` byte and of its `present` varint (optional fields follow in bit order).
inline constexpr uint8_t kApiLegacyStream = 1;  // bit 0; capture status in bits 1-2, capture mode in bits 3-4
inline constexpr uint32_t kApiHasCaptureId = 1 << 0;
inline constexpr uint32_t kApiHasBacktrace = 1 << 1;
inline constexpr uint32_t kApiHasBytes = 1 << 2;
inline constexpr uint32_t kApiHasMemoryKind = 1 << 3;  // direction | host_memory << 4
inline constexpr uint32_t kApiHasKernelName = 1 << 4;
inline constexpr uint32_t kApiHasDims = 1 << 5;  // grid x y z, block x y z
inline constexpr uint32_t kApiHasGraphId = 1 << 6;
inline constexpr uint32_t kApiHasNodeCount = 1 << 7;
inline constexpr uint32_t kApiHasOtherStream = 1 << 8;
inline constexpr uint32_t kApiKnownPresence = (1 << 9) - 1;

template <typename E>
inline void Timed(E& e, DeltaState& d, uint64_t correlation, uint64_t start, uint64_t end) {
  e.Varint(DeltaZigZag(d.correlation, correlation));
  e.Varint(DeltaZigZag(d.time, start));
  e.Varint(DeltaZigZag(start, end));
  d.correlation = correlation;
  d.time = start;
}

template <typename E>
inline void Dims(E& e, const std::array<uint32_t, 3>& grid, const std::array<uint32_t, 3>& block) {
  for (uint32_t v : grid) e.Varint(v);
  for (uint32_t v : block) e.Varint(v);
}

inline uint8_t PackMemoryKind(MemcpyDirection direction, HostMemory host) {
  return static_cast<uint8_t>(static_cast<uint8_t>(direction) | static_cast<uint8_t>(host) << 4);
}

inline void EncodeApiCall(Encoder& e, DeltaState& d, const ApiCallRecord& c) {
  Timed(e, d, c.correlation_id, c.start_ns, c.end_ns);
  e.Varint(DeltaZigZag(d.thread, c.thread_id));
  d.thread = c.thread_id;
  e.Varint(c.name);
  e.Byte(static_cast<uint8_t>(c.domain));
  e.Byte(static_cast<uint8_t>(c.kind));
  e.Varint(c.callback_id);
  e.Signed(c.return_code);
  e.Varint(c.stream_id);
  e.Byte(static_cast<uint8_t>((c.legacy_stream ? kApiLegacyStream : 0) | static_cast<uint8_t>(c.capture_status) << 1 |
                              static_cast<uint8_t>(c.capture_mode) << 3));
  const bool has_dims = c.grid != std::array<uint32_t, 3>{} || c.block != std::array<uint32_t, 3>{};
  const uint32_t present =
      (c.capture_id != 0 ? kApiHasCaptureId : 0) | (c.backtrace != 0 ? kApiHasBacktrace : 0) |
      (c.bytes != 0 ? kApiHasBytes : 0) |
      (c.direction != MemcpyDirection::kUnknown || c.host_memory != HostMemory::kNotApplicable ? kApiHasMemoryKind
                                                                                               : 0) |
      (c.kernel_name != 0 ? kApiHasKernelName : 0) | (has_dims ? kApiHasDims : 0) |
      (c.graph_id != 0 ? kApiHasGraphId : 0) | (c.node_count != 0 ? kApiHasNodeCount : 0) |
      (c.other_stream_id != 0 ? kApiHasOtherStream : 0);
  e.Varint(present);
  if (present & kApiHasCaptureId) e.Varint(c.capture_id);
  if (present & kApiHasBacktrace) e.Varint(c.backtrace);
  if (present & kApiHasBytes) e.Varint(c.bytes);
  if (present & kApiHasMemoryKind) e.Byte(PackMemoryKind(c.direction, c.host_memory));
  if (present & kApiHasKernelName) e.Varint(c.kernel_name);
  if (present & kApiHasDims) Dims(e, c.grid, c.block);
  if (present & kApiHasGraphId) e.Varint(c.graph_id);
  if (present & kApiHasNodeCount) e.Varint(c.node_count);
  if (present & kApiHasOtherStream) e.Varint(c.other_stream_id);
  // Since 1.2, a trailing field (which 1.1 readers skip): the Python stack id, only when there is one.
  if (c.python_stack != 0) e.Varint(c.python_stack);
}

inline void EncodeKernel(Encoder& e, DeltaState& d, const KernelRecord& k) {
  Timed(e, d, k.correlation_id, k.start_ns, k.end_ns);
  e.Varint(k.device);
  e.Varint(k.stream_id);
  e.Varint(k.graph_id);
  e.Varint(k.graph_node_id);
  e.Varint(k.name);
  Dims(e, k.grid, k.block);
}

inline void EncodeMemory(Encoder& e, DeltaState& d, const MemoryActivity& m) {
  e.Byte(static_cast<uint8_t>(m.kind));
  Timed(e, d, m.correlation_id, m.start_ns, m.end_ns);
  e.Varint(m.device);
  e.Varint(m.stream_id);
  e.Varint(m.graph_id);
  e.Varint(m.bytes);
  e.Byte(PackMemoryKind(m.direction, m.host_memory));
}

inline void EncodeAllocation(Encoder& e, DeltaState& d, const AllocatorEvent& a) {
  e.Byte(static_cast<uint8_t>(a.action));
  e.Varint(a.device);
  e.Varint(DeltaZigZag(d.time, a.time_ns));
  d.time = a.time_ns;
  e.Varint(a.address);
  e.Varint(a.bytes);
}

inline void EncodeGraphLaunch(Encoder& e, DeltaState& d, const GraphLaunchActivity& g) {
  Timed(e, d, g.correlation_id, g.start_ns, g.end_ns);
  e.Varint(g.device);
  e.Varint(g.stream_id);
  e.Varint(g.graph_id);
}

inline void EncodeNvtx(Encoder& e, DeltaState& d, const NvtxEvent& n) {
  e.Byte(static_cast<uint8_t>(n.kind));
  e.Varint(DeltaZigZag(d.thread, n.thread_id));
  d.thread = n.thread_id;
  e.Varint(DeltaZigZag(d.time, n.time_ns));
  d.time = n.time_ns;
  e.Varint(n.domain);
  e.Varint(n.message);
  e.Varint(n.range_id);
  e.Varint(n.communicator);
}

// Unbounded records: templates so the writer can size them first (SizeCounter) and then encode in place.
template <typename E>
void EncodeString(E& e, StringId id, absl::string_view s) {
  e.Varint(id);
  e.Bytes(s.data(), s.size());  // the rest of the payload
}

template <typename E>
void EncodeBacktrace(E& e, BacktraceId id, const StringId* frames, size_t count) {
  e.Varint(id);
  e.Varint(count);
  for (size_t i = 0; i < count; ++i) e.Varint(frames[i]);
}

// Python frames as (file id, line, function id) triples, innermost first.
template <typename E>
void EncodePythonStack(E& e, PythonStackId id, const PythonFrameRef* frames, size_t count) {
  e.Varint(id);
  e.Varint(count);
  for (size_t i = 0; i < count; ++i) {
    e.Varint(frames[i].file);
    e.Varint(frames[i].line);
    e.Varint(frames[i].function);
  }
}

template <typename E>
void EncodeProcess(E& e, const ProcessInfo& p) {
  e.Varint(p.pid);
  e.Varint(p.parent_pid);
  e.Signed(p.rank);
  e.Signed(p.local_rank);
  e.Signed(p.world_size);
  e.Varint(p.start_ns);
  e.String(p.hostname);
  e.Varint(p.command_line.size());
  for (const std::string& arg : p.command_line) e.String(arg);
}

template <typename E>
void EncodeGpu(E& e, const GpuInfo& gpu) {
  e.String(gpu.name);
  e.Signed(gpu.cc_major);
  e.Signed(gpu.cc_minor);
  e.String(gpu.driver);
}

template <typename E>
void EncodeDevice(E& e, const DeviceInfo& d) {
  e.Varint(d.index);
  EncodeGpu(e, d.gpu);
}

template <typename E>
void EncodeEnvironment(E& e, const Environment& env) {
  e.Varint(env.variables().size());
  for (const auto& [name, value] : env.variables()) {
    e.String(name);
    e.String(value);
  }
  e.Byte(env.gpu().has_value() ? 1 : 0);
  if (env.gpu().has_value()) EncodeGpu(e, *env.gpu());
}

template <typename E>
void EncodeRecorderStatus(E& e, const RecorderStatus& r) {
  e.Byte(r.subscribed ? 1 : 0);
  e.String(r.other_subscriber);
  e.String(r.message);
  e.Byte(static_cast<uint8_t>(r.launches));  // since 1.1; absent reads as kAll
}

template <typename E>
void EncodeRecorderError(E& e, const RecorderError& r) {
  e.Byte(static_cast<uint8_t>(r.kind));
  e.Varint(r.time_ns);
  e.Varint(r.count);
  e.Varint(r.call);
  e.Signed(r.code);
  e.Varint(r.context_id);
  e.Varint(r.stream_id);
}

template <typename E>
void EncodeProbeEvent(E& e, const ProbeEvent& p) {
  e.Byte(static_cast<uint8_t>(p.kind));
  e.Byte(static_cast<uint8_t>(p.origin));
  e.Varint(p.thread_id);
  e.Varint(p.time_ns);
  e.Varint(p.graph);
  e.Varint(p.pool);
  e.Varint(p.value);
  e.Varint(p.type);
  e.Varint(p.text);
  e.Varint(p.stack);
  e.Varint(p.value_now);  // since 1.4
}

template <typename E>
void EncodeShadowComparison(E& e, const ShadowComparison& c) {
  e.Varint(c.thread_id);
  e.Varint(c.time_ns);
  e.Varint(c.module);
  e.Varint(c.module_type);
  e.Varint(c.call);
  e.Varint(c.name);
  e.Varint(c.dtype);
  e.Varint(c.precision);
  e.Varint(c.stack);
  e.Varint(static_cast<uint64_t>(c.numel));
  e.Double(c.max_abs_error);
  e.Signed(c.worst_index);
  e.Double(c.eager_at_worst);
  e.Double(c.graphed_at_worst);
  e.Double(c.eager_abs_max);
  e.Double(c.eager_spread);
  e.Varint(static_cast<uint64_t>(c.eager_nonfinite));
  e.Varint(static_cast<uint64_t>(c.graphed_nonfinite));
  e.Byte(c.random ? 1 : 0);
  e.Varint(c.shadow_ns);
  e.Byte(static_cast<uint8_t>(c.subject));  // since 1.8
  e.Varint(c.draws);
}

template <typename E>
void EncodeThreadName(E& e, const ThreadName& t) {
  e.Varint(t.thread_id);
  e.Varint(t.name);
}

template <typename E>
void EncodeHang(E& e, const Hang& h) {
  e.Varint(h.thread_id);
  e.Varint(h.time_ns);
  e.Varint(h.since_ns);
  e.Varint(h.timeout_ns);
  e.Varint(h.call);
  e.Varint(h.stream_id);
  e.Varint(h.last_graph_id);
  e.Varint(h.stack);
}

// The uses follow their count, by address: access, address as a delta from the previous use's, bytes.
template <typename E>
void EncodeGraphManifest(E& e, const GraphManifest& m) {
  e.Varint(m.thread_id);
  e.Varint(m.time_ns);
  e.Varint(m.graph_id);
  e.Varint(m.kernel_nodes);
  e.Varint(m.copy_nodes);
  e.Varint(m.set_nodes);
  e.Varint(m.other_nodes);
  e.Varint(m.unread_nodes);
  e.Varint(m.unread_reason);
  e.Varint(m.uses_left_out);
  e.Varint(m.read_ns);
  e.Varint(m.uses.size());
  uint64_t previous = 0;
  for (const GraphMemoryUse& use : m.uses) {
    e.Byte(static_cast<uint8_t>(use.access));
    e.Varint(DeltaZigZag(previous, use.address));
    previous = use.address;
    e.Varint(use.bytes);
  }
}

// A sampling window opens (after launch recording is turned on) or closes (before it is turned off).
enum class WindowEdge : uint8_t { kOpen = 0, kClose = 1 };
template <typename E>
void EncodeLaunchWindowEdge(E& e, WindowEdge edge, uint64_t time_ns) {
  e.Byte(static_cast<uint8_t>(edge));
  e.Varint(time_ns);
}

// Decoders: false when the payload is malformed (the reader then reports the record's offset). `lenient` accepts
// trailing bytes, which a newer minor version may append to a record.
bool DecodeApiCall(absl::string_view payload, bool lenient, DeltaState& d, ApiCallRecord* out);
bool DecodeKernel(absl::string_view payload, bool lenient, DeltaState& d, KernelRecord* out);
bool DecodeMemory(absl::string_view payload, bool lenient, DeltaState& d, MemoryActivity* out);
bool DecodeGraphLaunch(absl::string_view payload, bool lenient, DeltaState& d, GraphLaunchActivity* out);
bool DecodeAllocation(absl::string_view payload, bool lenient, DeltaState& d, AllocatorEvent* out);
bool DecodeNvtx(absl::string_view payload, bool lenient, DeltaState& d, NvtxEvent* out);
bool DecodeString(absl::string_view payload, StringId* id, absl::string_view* s);
bool DecodeBacktrace(absl::string_view payload, bool lenient, BacktraceId* id, Backtrace* out);
bool DecodePythonStack(absl::string_view payload, bool lenient, PythonStackId* id, PythonStack* out);
bool DecodeProcess(absl::string_view payload, bool lenient, ProcessInfo* out);
bool DecodeDevice(absl::string_view payload, bool lenient, DeviceInfo* out);
bool DecodeEnvironment(absl::string_view payload, bool lenient, Environment* out);
bool DecodeRecorderStatus(absl::string_view payload, bool lenient, RecorderStatus* out);
bool DecodeRecorderError(absl::string_view payload, bool lenient, RecorderError* out);
bool DecodeProbeEvent(absl::string_view payload, bool lenient, ProbeEvent* out);
bool DecodeShadowComparison(absl::string_view payload, bool lenient, ShadowComparison* out);
bool DecodeHang(absl::string_view payload, bool lenient, Hang* out);
bool DecodeThreadName(absl::string_view payload, bool lenient, ThreadName* out);
bool DecodeGraphManifest(absl::string_view payload, bool lenient, GraphManifest* out);
bool DecodeLaunchWindowEdge(absl::string_view payload, bool lenient, WindowEdge* edge, uint64_t* time_ns);

}  // namespace graphcheck::trace::internal

#endif  // GRAPHCHECK_TRACE_INTERNAL_FORMAT_H_
