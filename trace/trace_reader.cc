// The trace reader: walks the chunks of a trace file, decodes each chunk's committed records, and turns any damage
// into a warning with its byte offset.
#include "trace/trace_reader.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/file_io.h"
#include "trace/internal/format.h"

namespace graphcheck::trace {
namespace {

using internal::RecordType;

// All chunks start at a multiple of this from the file start (the smallest page size), so after a damaged chunk
// header the reader can look for the next chunk there.
constexpr uint64_t kMinAlignment = 4096;
constexpr uint64_t kMaxChunkCapacity = internal::kMaxChunkBytes;
static_assert(std::tuple_size<decltype(TraceFileStats::records)>::value == internal::kMaxRecordType + 1,
              "TraceFileStats counts every record type");

// Where the reader's bytes come from. A file is read a chunk at a time (pread into one reused buffer), so reading
// never holds the whole file: a trace's events in memory already take more than the file.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  virtual uint64_t size() const = 0;
  // `n` bytes at `offset` (offset + n <= size()); the view lives until the next Read. Fewer bytes when the file
  // shrank while being read.
  virtual absl::string_view Read(uint64_t offset, uint64_t n) = 0;
};

class MemorySource : public ByteSource {
 public:
  explicit MemorySource(absl::string_view bytes) : bytes_(bytes) {}
  uint64_t size() const override { return bytes_.size(); }
  absl::string_view Read(uint64_t offset, uint64_t n) override { return bytes_.substr(offset, n); }

 private:
  absl::string_view bytes_;
};

class FileSource : public ByteSource {
 public:
  FileSource(int fd, uint64_t size) : fd_(fd), size_(size) {}
  uint64_t size() const override { return size_; }
  absl::string_view Read(uint64_t offset, uint64_t n) override {
    buffer_.resize(n);
    uint64_t done = 0;
    while (done < n) {
      const ssize_t got = pread(fd_, buffer_.data() + done, n - done, static_cast<off_t>(offset + done));
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) break;  // shrank (or failed) while reading: keep what is there
      done += static_cast<uint64_t>(got);
    }
    return absl::string_view(buffer_.data(), done);
  }

 private:
  int fd_;
  uint64_t size_;
  std::string buffer_;
};

class ChunkWalker {
 public:
  // kCount only counts the records of each type (for reserving exact room), silently; kDecode reads them.
  enum class Pass { kCount, kDecode };

  ChunkWalker(ByteSource* source, bool lenient, Pass pass, Trace* trace, TraceFileStats* stats)
      : source_(source), lenient_(lenient), pass_(pass), trace_(trace), stats_(stats) {}

  void Walk(uint64_t data_offset, uint64_t granularity) {
    uint64_t offset = data_offset;
    while (offset < source_->size()) offset = Chunk(offset, granularity);
    if (pass_ == Pass::kCount) return;
    ResolveIds();
    PairWindowEdges();
  }

 private:
  void Warn(uint64_t offset, absl::string_view what) {
    if (pass_ == Pass::kDecode) trace_->read_warnings.push_back(absl::StrCat("offset ", offset, ": ", what));
  }

  // Reads the chunk at `offset`; returns where the next one starts.
  uint64_t Chunk(uint64_t offset, uint64_t granularity) {
    const uint64_t file_size = source_->size();
    const uint64_t left = file_size - offset;
    uint8_t header[internal::kChunkHeaderBytes];
    const absl::string_view header_bytes = source_->Read(offset, std::min<uint64_t>(left, sizeof(header)));
    if (header_bytes.size() < sizeof(header)) {
      Warn(offset, absl::StrCat("truncated chunk header (", header_bytes.size(), " of ", sizeof(header), " bytes)"));
      return file_size;
    }
    std::memcpy(header, header_bytes.data(), sizeof(header));
    const uint32_t magic = internal::LoadLe32(header + internal::kChunkMagicOffset);
    if (magic != internal::kChunkMagic) {
      // A chunk taken but never written (the writer died between growing the file and writing the header) is all
      // zeros and no damage.
      if (std::any_of(header, header + sizeof(header), [](uint8_t b) { return b != 0; })) {
        Warn(offset, "bad chunk magic; skipping to the next chunk boundary");
      }
      return offset + granularity;
    }
    const uint64_t capacity = internal::LoadLe64(header + internal::kChunkCapacityOffset);
    if (capacity < granularity || capacity % granularity != 0 || capacity > kMaxChunkCapacity) {
      Warn(offset, absl::StrCat("impossible chunk capacity ", capacity, "; skipping to the next chunk boundary"));
      return offset + granularity;
    }
    ++stats_->chunks;
    const uint64_t payload_capacity = capacity - internal::kChunkHeaderBytes;
    uint64_t committed = internal::LoadLe64(header + internal::kChunkCommittedOffset);
    if (committed > payload_capacity) {
      Warn(offset, absl::StrCat("committed count ", committed, " exceeds the chunk's capacity ", payload_capacity));
      committed = payload_capacity;
    }
    const uint64_t begin = offset + internal::kChunkHeaderBytes;
    const absl::string_view records = source_->Read(begin, std::min<uint64_t>(committed, left - sizeof(header)));
    if (records.size() < committed) {
      Warn(offset, absl::StrCat("truncated chunk: ", records.size(), " of ", committed, " committed bytes present"));
    }
    Records(begin, records, /*cut=*/records.size() < committed);
    return capacity >= left ? file_size : offset + capacity;
  }

  // The committed records of one chunk, which starts at file offset `begin`. `cut`: the file ends inside this chunk;
  // its last record running past the end is already warned about.
  void Records(uint64_t begin, absl::string_view chunk, bool cut) {
    internal::DeltaState delta;
    const uint64_t size = chunk.size();
    uint64_t pos = 0;
    while (pos < size) {
      const uint64_t offset = begin + pos;
      const uint8_t type = static_cast<uint8_t>(chunk[pos]);
      internal::Decoder length_decoder(chunk.substr(pos + 1));
      uint64_t length;
      if (!length_decoder.Varint(&length)) {
        if (!cut) Warn(offset, "truncated record header; skipping the rest of the chunk");
        return;
      }
      if (length > length_decoder.remaining()) {
        if (!cut)
          Warn(offset, absl::StrCat("record length ", length, " exceeds the chunk's committed bytes (",
                                    length_decoder.remaining(), " left); skipping the rest of the chunk"));
        return;
      }
      const uint64_t header_bytes = 1 + (size - pos - 1) - length_decoder.remaining();
      const absl::string_view payload = chunk.substr(pos + header_bytes, length);
      if (type == 0 || type > internal::kMaxRecordType) {
        if (!lenient_) {
          Warn(offset, absl::StrCat("unknown record type ", type, "; skipping the rest of the chunk"));
          return;
        }
        Count(0, header_bytes + length);  // a newer minor version's record: skipped by design
      } else if (pass_ == Pass::kDecode && !Decode(static_cast<RecordType>(type), offset, payload, delta)) {
        Warn(offset, absl::StrCat("corrupt ", internal::RecordTypeName(type), " record of ", length,
                                  " bytes; skipping the rest of the chunk"));
        return;
      } else {
        Count(type, header_bytes + length);
      }
      pos += header_bytes + length;
    }
  }

  void Count(size_t type, uint64_t bytes) {
    ++stats_->records[type];
    stats_->record_bytes[type] += bytes;
  }

  bool Decode(RecordType type, uint64_t offset, absl::string_view payload, internal::DeltaState& delta) {
    switch (type) {
      case RecordType::kApiCall: {
        ApiCallRecord call;
        if (!internal::DecodeApiCall(payload, lenient_, delta, &call)) return false;
        trace_->AddCall(call);
        return true;
      }
      case RecordType::kKernel: {
        KernelRecord kernel;
        if (!internal::DecodeKernel(payload, lenient_, delta, &kernel)) return false;
        trace_->AddKernel(kernel);
        return true;
      }
      case RecordType::kMemory:
        return internal::DecodeMemory(payload, lenient_, delta, &trace_->memory.emplace_back()) || Drop(trace_->memory);
      case RecordType::kAllocation:
        return internal::DecodeAllocation(payload, lenient_, delta, &trace_->allocations.emplace_back()) ||
               Drop(trace_->allocations);
      case RecordType::kGraphLaunch:
        return internal::DecodeGraphLaunch(payload, lenient_, delta, &trace_->graph_launches.emplace_back()) ||
               Drop(trace_->graph_launches);
      case RecordType::kNvtx:
        return internal::DecodeNvtx(payload, lenient_, delta, &trace_->nvtx.emplace_back()) || Drop(trace_->nvtx);
      case RecordType::kDevice:
        return internal::DecodeDevice(payload, lenient_, &trace_->devices.emplace_back()) || Drop(trace_->devices);
      case RecordType::kString: {
        IdEntry<std::string>& entry = strings_.emplace_back();
        entry.offset = offset;
        absl::string_view value;
        if (!internal::DecodeString(payload, &entry.id, &value)) return Drop(strings_);
        entry.value = KeptString(value);  // a copy: the chunk buffer is reused
        return true;
      }
      case RecordType::kBacktrace: {
        IdEntry<Backtrace>& entry = backtraces_.emplace_back();
        entry.offset = offset;
        return internal::DecodeBacktrace(payload, lenient_, &entry.id, &entry.value) || Drop(backtraces_);
      }
      case RecordType::kPythonStack: {
        IdEntry<PythonStack>& entry = python_stacks_.emplace_back();
        entry.offset = offset;
        return internal::DecodePythonStack(payload, lenient_, &entry.id, &entry.value) || Drop(python_stacks_);
      }
      case RecordType::kProcess:
        return DecodeInto(&trace_->process,
                          [&](ProcessInfo* p) { return internal::DecodeProcess(payload, lenient_, p); });
      case RecordType::kEnvironment:
        return DecodeInto(&trace_->environment,
                          [&](Environment* e) { return internal::DecodeEnvironment(payload, lenient_, e); });
      case RecordType::kRecorderStatus:
        return DecodeInto(&trace_->recorder,
                          [&](RecorderStatus* r) { return internal::DecodeRecorderStatus(payload, lenient_, r); });
      case RecordType::kRecorderError:
        return internal::DecodeRecorderError(payload, lenient_, &trace_->integrity.errors.emplace_back()) ||
               Drop(trace_->integrity.errors);
      case RecordType::kProbeEvent:
        return internal::DecodeProbeEvent(payload, lenient_, &trace_->probe_events.emplace_back()) ||
               Drop(trace_->probe_events);
      case RecordType::kShadowComparison:
        return internal::DecodeShadowComparison(payload, lenient_, &trace_->shadow_comparisons.emplace_back()) ||
               Drop(trace_->shadow_comparisons);
      case RecordType::kHang:
        return internal::DecodeHang(payload, lenient_, &trace_->hangs.emplace_back()) || Drop(trace_->hangs);
      case RecordType::kThreadName:
        return internal::DecodeThreadName(payload, lenient_, &trace_->thread_names.emplace_back()) ||
               Drop(trace_->thread_names);
      case RecordType::kGraphManifest:
        return internal::DecodeGraphManifest(payload, lenient_, &trace_->graph_manifests.emplace_back()) ||
               Drop(trace_->graph_manifests);
      case RecordType::kLaunchWindowEdge: {
        WindowEdgeEntry& entry = window_edges_.emplace_back();
        return internal::DecodeLaunchWindowEdge(payload, lenient_, &entry.edge, &entry.time_ns) || Drop(window_edges_);
      }
    }
    return false;
  }

  template <typename T>
  static bool Drop(std::vector<T>& records) {
    records.pop_back();
    return false;
  }

  // Singletons are replaced only by a record that decodes whole.
  template <typename T, typename DecodeFn>
  static bool DecodeInto(T* target, DecodeFn decode) {
    T value;
    if (!decode(&value)) return false;
    *target = std::move(value);
    return true;
  }

  template <typename T>
  struct IdEntry {
    uint32_t id = 0;
    T value;
    uint64_t offset = 0;
  };

  // Ids are dense from 1 in the writer, so an id far beyond the number of records of its kind is damage; bounding
  // it keeps a corrupted id from sizing a huge table.
  template <typename T, typename Place>
  void PlaceById(std::vector<IdEntry<T>>& entries, Place place) {
    const uint64_t limit = 2 * entries.size() + 1024;
    for (IdEntry<T>& entry : entries) {
      if (entry.id > limit) {
        Warn(entry.offset, absl::StrCat("id ", entry.id, " out of range (", entries.size(), " records of its kind)"));
        continue;
      }
      place(entry.id, std::move(entry.value));
    }
  }

  void ResolveIds() {
    PlaceById(strings_, [&](StringId id, std::string s) {
      if (id >= trace_->strings.size()) trace_->strings.resize(id + 1);
      trace_->strings[id] = std::move(s);
    });
    PlaceById(backtraces_, [&](BacktraceId id, Backtrace b) {
      if (id > trace_->backtraces.size()) trace_->backtraces.resize(id);
      trace_->backtraces[id - 1] = std::move(b);
    });
    PlaceById(python_stacks_, [&](PythonStackId id, PythonStack p) {
      if (id > trace_->python_stacks.size()) trace_->python_stacks.resize(id);
      trace_->python_stacks[id - 1] = std::move(p);
    });
  }

  // Edges in time order, paired into windows; a close without an open is damage and skipped, an open without a
  // close lasts to the end of the trace.
  void PairWindowEdges() {
    std::stable_sort(window_edges_.begin(), window_edges_.end(),
                     [](const WindowEdgeEntry& a, const WindowEdgeEntry& b) { return a.time_ns < b.time_ns; });
    for (const WindowEdgeEntry& entry : window_edges_) {
      std::vector<LaunchWindow>& windows = trace_->launch_windows;
      const bool open = !windows.empty() && windows.back().end_ns == ~uint64_t{0};
      if (entry.edge == internal::WindowEdge::kOpen && !open) {
        windows.push_back(LaunchWindow{entry.time_ns});
      } else if (entry.edge == internal::WindowEdge::kClose && open) {
        windows.back().end_ns = entry.time_ns;
      }
    }
  }

  struct WindowEdgeEntry {
    internal::WindowEdge edge = internal::WindowEdge::kOpen;
    uint64_t time_ns = 0;
  };

  ByteSource* source_;
  bool lenient_;
  Pass pass_;
  Trace* trace_;
  TraceFileStats* stats_;
  std::vector<IdEntry<std::string>> strings_;
  std::vector<IdEntry<Backtrace>> backtraces_;
  std::vector<IdEntry<PythonStack>> python_stacks_;
  std::vector<WindowEdgeEntry> window_edges_;
};

// Stable by time: records of one thread at the same timestamp keep their order (an NVTX push before its pop).
// Unsorted input (several threads) is ordered through a permutation of 32-bit indices applied in place, so sorting
// needs 4-6 bytes per event rather than a second copy of the events.
template <typename T, typename Time>
void SortByTime(std::vector<T>& events, Time time) {
  auto earlier = [&](const T& a, const T& b) { return time(a) < time(b); };
  if (std::is_sorted(events.begin(), events.end(), earlier)) return;
  std::vector<uint32_t> order(events.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<uint32_t>(i);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return time(events[a]) < time(events[b]); });
  // Position i takes events[order[i]]; each cycle of the permutation is rotated once, and order[i] = i marks done.
  for (size_t i = 0; i < order.size(); ++i) {
    if (order[i] == i) continue;
    T held = std::move(events[i]);
    size_t to = i;
    while (order[to] != i) {
      const size_t from = order[to];
      events[to] = std::move(events[from]);
      order[to] = static_cast<uint32_t>(to);
      to = from;
    }
    events[to] = std::move(held);
    order[to] = static_cast<uint32_t>(to);
  }
}

// The header's end state and expected length, and the loss table (since 1.2).
void ReadIntegrity(ByteSource& source, uint64_t data_offset, const uint8_t* header, Trace* trace) {
  TraceIntegrity& integrity = trace->integrity;
  const uint32_t end = internal::LoadLe32(header + internal::kEndStateOffset);
  integrity.end = end >= static_cast<uint32_t>(TraceEnd::kRunning) && end <= static_cast<uint32_t>(TraceEnd::kHung)
                      ? static_cast<TraceEnd>(end)
                      : TraceEnd::kRunning;  // damaged or never set: no clean end is known
  integrity.signal = static_cast<int32_t>(internal::LoadLe32(header + internal::kEndSignalOffset));
  integrity.end_time_ns = internal::LoadLe64(header + internal::kEndTimeOffset);
  integrity.expected_bytes = internal::LoadLe64(header + internal::kExpectedBytesOffset);
  if (integrity.expected_bytes > source.size()) {
    trace->read_warnings.push_back(absl::StrCat("offset ", source.size(), ": the file ends ",
                                                integrity.expected_bytes - source.size(),
                                                " bytes before the length its writer gave it (cut or copied early)"));
  }
  const uint64_t table_end = internal::kLossTableOffset + internal::kLossEntryBytes * kLossKinds;
  if (data_offset < table_end || source.size() < table_end) return;
  const absl::string_view page = source.Read(0, table_end);
  if (page.size() < table_end) return;
  const auto* bytes = reinterpret_cast<const uint8_t*>(page.data());
  const uint64_t entries = std::min<uint64_t>(internal::LoadLe32(bytes + internal::kLossCountOffset), kLossKinds);
  for (uint64_t k = 0; k < entries; ++k) {
    const uint8_t* entry = bytes + internal::kLossTableOffset + internal::kLossEntryBytes * k;
    LossCount loss{static_cast<LossKind>(k), internal::LoadLe64(entry + internal::kLossCountField),
                   internal::LoadLe64(entry + internal::kLossFirstField),
                   internal::LoadLe64(entry + internal::kLossLastField)};
    if (loss.count != 0) integrity.losses.push_back(loss);
  }
}

// Reads a whole trace from `source`: counts the records first so that every event vector is allocated once, at its
// final size.
absl::StatusOr<Trace> ReadFromSource(ByteSource& source, TraceFileStats* stats) {
  TraceFileStats local_stats;
  if (stats == nullptr) stats = &local_stats;
  *stats = TraceFileStats();
  stats->file_bytes = source.size();
  // A run killed before its recorder wrote anything leaves an empty file: say so, not "bad magic".
  if (source.size() == 0) return absl::InvalidArgumentError("the file is empty (0 bytes): no trace was written to it");
  uint8_t header[internal::kFileHeaderBytes];
  const absl::string_view header_bytes = source.Read(0, std::min<uint64_t>(source.size(), sizeof(header)));
  if (header_bytes.size() < sizeof(header) ||
      std::memcmp(header_bytes.data(), internal::kFileMagic, sizeof(internal::kFileMagic)) != 0) {
    return absl::InvalidArgumentError("not a graphcheck trace (bad magic)");
  }
  std::memcpy(header, header_bytes.data(), sizeof(header));
  stats->major_version =
      static_cast<uint16_t>(header[internal::kMajorOffset] | header[internal::kMajorOffset + 1] << 8);
  stats->minor_version =
      static_cast<uint16_t>(header[internal::kMinorOffset] | header[internal::kMinorOffset + 1] << 8);
  stats->writer_pid = internal::LoadLe32(header + internal::kWriterPidOffset);
  if (stats->major_version != internal::kMajorVersion) {
    return absl::InvalidArgumentError(absl::StrCat("unsupported trace format version ", stats->major_version, ".",
                                                   stats->minor_version, " (this graphcheck reads ",
                                                   internal::kMajorVersion, ".x)"));
  }
  Trace trace;
  uint64_t data_offset = internal::LoadLe32(header + internal::kDataOffsetOffset);
  uint64_t granularity = internal::LoadLe32(header + internal::kChunkBytesOffset);
  if (data_offset < internal::kFileHeaderBytes || data_offset % kMinAlignment != 0 || granularity == 0 ||
      granularity % kMinAlignment != 0) {
    trace.read_warnings.push_back(absl::StrCat("offset ", internal::kDataOffsetOffset, ": impossible data offset ",
                                               data_offset, " or chunk size ", granularity,
                                               "; scanning every 4096 bytes for chunks"));
    data_offset = granularity = kMinAlignment;
  }
  const bool lenient = stats->minor_version > internal::kMinorVersion;
  trace.integrity.file_bytes = source.size();
  if (stats->minor_version >= 2) ReadIntegrity(source, data_offset, header, &trace);
  TraceFileStats counted;
  ChunkWalker(&source, lenient, ChunkWalker::Pass::kCount, &trace, &counted).Walk(data_offset, granularity);
  auto count = [&](RecordType type) { return counted.records[static_cast<size_t>(type)]; };
  trace.api_calls.reserve(count(RecordType::kApiCall));
  trace.kernels.reserve(count(RecordType::kKernel));
  trace.memory.reserve(count(RecordType::kMemory));
  trace.graph_launches.reserve(count(RecordType::kGraphLaunch));
  trace.nvtx.reserve(count(RecordType::kNvtx));
  trace.probe_events.reserve(count(RecordType::kProbeEvent));
  trace.shadow_comparisons.reserve(count(RecordType::kShadowComparison));
  trace.allocations.reserve(count(RecordType::kAllocation));
  trace.graph_manifests.reserve(count(RecordType::kGraphManifest));
  ChunkWalker(&source, lenient, ChunkWalker::Pass::kDecode, &trace, stats).Walk(data_offset, granularity);
  trace.integrity.chunks = stats->chunks;

  SortByTime(trace.api_calls, [](const ApiCall& c) { return c.start_ns; });
  SortByTime(trace.kernels, [](const KernelActivity& k) { return k.start_ns; });
  SortByTime(trace.memory, [](const MemoryActivity& m) { return m.start_ns; });
  SortByTime(trace.graph_launches, [](const GraphLaunchActivity& g) { return g.start_ns; });
  SortByTime(trace.nvtx, [](const NvtxEvent& n) { return n.time_ns; });
  SortByTime(trace.probe_events, [](const ProbeEvent& p) { return p.time_ns; });
  SortByTime(trace.shadow_comparisons, [](const ShadowComparison& c) { return c.time_ns; });
  SortByTime(trace.allocations, [](const AllocatorEvent& a) { return a.time_ns; });
  SortByTime(trace.graph_manifests, [](const GraphManifest& m) { return m.time_ns; });
  DeriveGraphLaunches(&trace);
  return trace;
}

}  // namespace

absl::StatusOr<Trace> ReadTraceFromBytes(absl::string_view bytes, TraceFileStats* stats) {
  MemorySource source(bytes);
  return ReadFromSource(source, stats);
}

absl::StatusOr<Trace> ReadTrace(const std::string& path, TraceFileStats* stats) {
  // A FIFO, a device or a folder is refused at once, without blocking (core/file_io.h).
  uint64_t size = 0;
  absl::StatusOr<ScopedFd> opened = OpenRegularFile(path, "trace", &size);
  if (!opened.ok()) return opened.status();
  const ScopedFd fd = *std::move(opened);
  FileSource source(fd.get(), size);
  absl::StatusOr<Trace> trace = ReadFromSource(source, stats);
  if (!trace.ok()) return absl::InvalidArgumentError(absl::StrCat("'", path, "': ", trace.status().message()));
  return trace;
}

absl::string_view TraceRecordTypeName(size_t type) {
  return type <= internal::kMaxRecordType ? internal::RecordTypeName(static_cast<uint8_t>(type)) : "unknown";
}

}  // namespace graphcheck::trace
