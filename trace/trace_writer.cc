// TraceWriter: chunked, memory-mapped appends (see trace_writer.h for the design, docs/trace-format.md for the bytes).
#include "trace/trace_writer.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <utility>

#include "absl/base/optimization.h"
#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "trace/internal/format.h"

namespace graphcheck::trace {
namespace internal {

// A MAP_SHARED mapping of one chunk; unmapping never loses data (the pages stay in the page cache).
class ChunkMapping {
 public:
  ChunkMapping() = default;
  ChunkMapping(uint8_t* base, size_t size) : base_(base), size_(size) {}
  ~ChunkMapping() { reset(); }
  ChunkMapping(const ChunkMapping&) = delete;
  ChunkMapping& operator=(ChunkMapping&& other) noexcept {
    if (this != &other) {
      reset();
      base_ = std::exchange(other.base_, nullptr);
      size_ = std::exchange(other.size_, 0);
    }
    return *this;
  }
  void reset() {
    if (base_ != nullptr) munmap(base_, size_);
    base_ = nullptr;
    size_ = 0;
  }
  uint8_t* base() const { return base_; }
  size_t size() const { return size_; }

 private:
  uint8_t* base_ = nullptr;
  size_t size_ = 0;
};

// One writing thread's state; only that thread touches it (the fork child, single-threaded, resets all of them).
struct WriterThread {
  ChunkMapping chunk;
  size_t used = 0;  // payload bytes after the chunk header, all committed
  DeltaState delta;
  std::atomic<uint64_t> records{0};
  std::atomic<uint64_t> bytes{0};
  std::atomic<uint64_t> dropped{0};
  absl::flat_hash_map<std::string, StringId> strings;  // cache of the writer's shared string table

  size_t remaining() const { return chunk.base() == nullptr ? 0 : chunk.size() - kChunkHeaderBytes - used; }
  uint8_t* cursor() const { return chunk.base() + kChunkHeaderBytes + used; }
  std::atomic<uint64_t>* committed() const {
    return reinterpret_cast<std::atomic<uint64_t>*>(chunk.base() + kChunkCommittedOffset);
  }
  // Only the owning thread writes these counters, so a load and a store replace a locked read-modify-write.
  static void Bump(std::atomic<uint64_t>& counter, uint64_t by) {
    counter.store(counter.load(std::memory_order_relaxed) + by, std::memory_order_relaxed);
  }
  void Commit(size_t n) {
    used += n;
    committed()->store(used, std::memory_order_release);
    Bump(records, 1);
    Bump(bytes, n);
  }
};
static_assert(std::atomic<uint64_t>::is_always_lock_free, "the committed count lives in the mapped file");

}  // namespace internal

using internal::WriterThread;

namespace {

std::atomic<uint64_t> g_next_serial{1};
std::atomic<uint64_t> g_fork_generation{0};

struct ThreadCache {
  uint64_t serial = 0;
  WriterThread* state = nullptr;
};
thread_local ThreadCache t_cache;

uint32_t CurrentTid() { return static_cast<uint32_t>(syscall(SYS_gettid)); }

size_t RoundUp(size_t n, size_t multiple) { return (n + multiple - 1) / multiple * multiple; }

size_t VarintSize(uint64_t v) {
  internal::SizeCounter c;
  c.Varint(v);
  return c.size();
}

absl::Status ErrnoStatus(absl::string_view what, absl::string_view path) {
  return absl::InvalidArgumentError(absl::StrCat("cannot ", what, " trace file '", path, "': ", std::strerror(errno)));
}

}  // namespace

class TraceWriter::Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() { close(fd_); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

template <typename Key>
struct TraceWriter::InternShard {
  std::mutex mu;
  absl::flat_hash_map<Key, uint32_t> ids;
};

namespace {

// Creates `path` with its file header; no heap use on success, so the fork child can call it.
absl::StatusOr<int> CreateFile(const std::string& path, size_t data_offset, size_t chunk_bytes) {
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoStatus("create", path);
  uint8_t header[internal::kFileHeaderBytes] = {};
  std::memcpy(header + internal::kFileMagicOffset, internal::kFileMagic, sizeof(internal::kFileMagic));
  header[internal::kMajorOffset] = internal::kMajorVersion & 0xff;
  header[internal::kMajorOffset + 1] = internal::kMajorVersion >> 8;
  header[internal::kMinorOffset] = internal::kMinorVersion & 0xff;
  header[internal::kMinorOffset + 1] = internal::kMinorVersion >> 8;
  internal::StoreLe32(header + internal::kDataOffsetOffset, static_cast<uint32_t>(data_offset));
  internal::StoreLe32(header + internal::kChunkBytesOffset, static_cast<uint32_t>(chunk_bytes));
  internal::StoreLe32(header + internal::kWriterPidOffset, static_cast<uint32_t>(getpid()));
  timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  internal::StoreLe64(header + internal::kCreatedOffset,
                      static_cast<uint64_t>(now.tv_sec) * 1000000000ull + static_cast<uint64_t>(now.tv_nsec));
  if (pwrite(fd, header, sizeof(header), 0) != static_cast<ssize_t>(sizeof(header)) ||
      ftruncate(fd, static_cast<off_t>(data_offset)) != 0) {
    absl::Status status = ErrnoStatus("write", path);
    close(fd);
    return status;
  }
  return fd;
}

}  // namespace

// Process-wide fork handling for every live writer (see LockForFork).
struct ForkHandlers {
  static std::mutex& Mutex() {
    static auto* mu = new std::mutex;  // never destroyed: writers may outlive static destruction
    return *mu;
  }
  static std::vector<TraceWriter*>& Writers() {
    static auto* writers = new std::vector<TraceWriter*>;
    return *writers;
  }
  static void Install() {
    static std::once_flag once;
    std::call_once(once, [] { pthread_atfork(&Prepare, &Parent, &Child); });
  }
  static void Prepare() {
    Mutex().lock();
    for (TraceWriter* w : Writers()) w->LockForFork();
  }
  static void Parent() {
    for (TraceWriter* w : Writers()) w->UnlockAfterFork();
    Mutex().unlock();
  }
  static void Child() {
    g_fork_generation.fetch_add(1, std::memory_order_relaxed);
    Parent();
  }
};

TraceWriter::TraceWriter(std::string path, std::unique_ptr<Fd> fd, size_t chunk_bytes, size_t data_offset,
                         uint64_t (*clock)())
    : serial_(g_next_serial.fetch_add(1)),
      path_(std::move(path)),
      chunk_bytes_(chunk_bytes),
      data_offset_(data_offset),
      clock_(clock),
      fork_generation_(g_fork_generation.load()),
      fd_(std::move(fd)),
      next_chunk_offset_(data_offset),
      string_shards_(std::make_unique<std::array<InternShard<std::string>, kShards>>()),
      backtrace_shards_(std::make_unique<std::array<InternShard<std::vector<StringId>>, kShards>>()),
      python_shards_(std::make_unique<std::array<InternShard<std::vector<PythonFrameRef>>, kShards>>()) {}

absl::StatusOr<std::unique_ptr<TraceWriter>> TraceWriter::Create(const std::string& path, const ProcessInfo& process) {
  return Create(path, process, Options());
}

absl::StatusOr<std::unique_ptr<TraceWriter>> TraceWriter::Create(const std::string& path, const ProcessInfo& process,
                                                                 const Options& options) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t chunk_bytes = RoundUp(std::max<size_t>(options.chunk_bytes, 1), page);
  const size_t data_offset = RoundUp(internal::kFileHeaderBytes, page);
  absl::StatusOr<int> fd = CreateFile(path, data_offset, chunk_bytes);
  if (!fd.ok()) return fd.status();
  std::unique_ptr<TraceWriter> writer(
      new TraceWriter(path, std::make_unique<Fd>(*fd), chunk_bytes, data_offset, options.clock));
  if (!writer->MapHeader()) return ErrnoStatus("map", path);
  writer->WriteProcess(writer->CurrentThread(), process);
  if (writer->failed_.load()) return absl::ResourceExhaustedError(absl::StrCat("cannot grow trace file '", path, "'"));
  ForkHandlers::Install();
  std::lock_guard<std::mutex> lock(ForkHandlers::Mutex());
  ForkHandlers::Writers().push_back(writer.get());
  return writer;
}

static std::atomic<uint64_t>* Atomic64(uint8_t* p) { return reinterpret_cast<std::atomic<uint64_t>*>(p); }
static std::atomic<uint32_t>* Atomic32(uint8_t* p) { return reinterpret_cast<std::atomic<uint32_t>*>(p); }

bool TraceWriter::MapHeader() {
  void* base = mmap(nullptr, data_offset_, PROT_READ | PROT_WRITE, MAP_SHARED, fd_->get(), 0);
  if (base == MAP_FAILED) return false;
  header_ = std::make_unique<internal::ChunkMapping>(static_cast<uint8_t*>(base), data_offset_);
  uint8_t* h = header_->base();
  internal::StoreLe32(h + internal::kLossCountOffset, static_cast<uint32_t>(kLossKinds));
  Atomic64(h + internal::kExpectedBytesOffset)->store(data_offset_, std::memory_order_relaxed);
  Atomic32(h + internal::kEndStateOffset)->store(static_cast<uint32_t>(TraceEnd::kRunning), std::memory_order_release);
  return true;
}

uint64_t TraceWriter::Now() const {
  if (clock_ != nullptr) return clock_();
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1000000000ull + static_cast<uint64_t>(now.tv_nsec);
}

void TraceWriter::CountLoss(LossKind kind, uint64_t count) {
  if (count == 0 || static_cast<size_t>(kind) >= kLossKinds || header_ == nullptr ||
      fork_generation_ != g_fork_generation.load(std::memory_order_relaxed)) {
    return;
  }
  uint8_t* entry = header_->base() + internal::kLossTableOffset + internal::kLossEntryBytes * static_cast<size_t>(kind);
  const uint64_t now = Now();
  Atomic64(entry + internal::kLossCountField)->fetch_add(count, std::memory_order_relaxed);
  uint64_t unset = 0;
  Atomic64(entry + internal::kLossFirstField)->compare_exchange_strong(unset, now, std::memory_order_relaxed);
  std::atomic<uint64_t>* last = Atomic64(entry + internal::kLossLastField);
  uint64_t previous = last->load(std::memory_order_relaxed);
  while (previous < now && !last->compare_exchange_weak(previous, now, std::memory_order_relaxed)) {
  }
}

void TraceWriter::CountDropped() { CountLoss(LossKind::kWriterDropped, 1); }

void TraceWriter::MarkEnd(TraceEnd end, int signal) {
  if (header_ == nullptr || fork_generation_ != g_fork_generation.load(std::memory_order_relaxed)) return;
  uint8_t* h = header_->base();
  timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  Atomic32(h + internal::kEndSignalOffset)->store(static_cast<uint32_t>(signal), std::memory_order_relaxed);
  Atomic64(h + internal::kEndTimeOffset)
      ->store(static_cast<uint64_t>(now.tv_sec) * 1000000000ull + static_cast<uint64_t>(now.tv_nsec),
              std::memory_order_relaxed);
  Atomic32(h + internal::kEndStateOffset)->store(static_cast<uint32_t>(end), std::memory_order_release);
}

void TraceWriter::WriteRecorderError(const RecorderError& error) {
  AppendCold(CurrentThread(), static_cast<uint8_t>(internal::RecordType::kRecorderError),
             [&](auto& e) { internal::EncodeRecorderError(e, error); });
}

void TraceWriter::WriteProbeEvent(const ProbeEvent& event) {
  AppendCold(CurrentThread(), static_cast<uint8_t>(internal::RecordType::kProbeEvent),
             [&](auto& e) { internal::EncodeProbeEvent(e, event); });
}

void TraceWriter::WriteShadowComparison(const ShadowComparison& comparison) {
  AppendCold(CurrentThread(), static_cast<uint8_t>(internal::RecordType::kShadowComparison),
             [&](auto& e) { internal::EncodeShadowComparison(e, comparison); });
}

void TraceWriter::WriteHang(const Hang& hang) {
  AppendCold(CurrentThread(), static_cast<uint8_t>(internal::RecordType::kHang),
             [&](auto& e) { internal::EncodeHang(e, hang); });
}

void TraceWriter::WriteGraphManifest(const GraphManifest& manifest) {
  AppendCold(CurrentThread(), static_cast<uint8_t>(internal::RecordType::kGraphManifest),
             [&](auto& e) { internal::EncodeGraphManifest(e, manifest); });
}

void TraceWriter::WriteThreadName(const ThreadName& thread) {
  AppendCold(CurrentThread(), static_cast<uint8_t>(internal::RecordType::kThreadName),
             [&](auto& e) { internal::EncodeThreadName(e, thread); });
}

TraceWriter::~TraceWriter() {
  std::lock_guard<std::mutex> lock(ForkHandlers::Mutex());
  std::vector<TraceWriter*>& writers = ForkHandlers::Writers();
  writers.erase(std::remove(writers.begin(), writers.end(), this), writers.end());
}

WriterThread* TraceWriter::CurrentThread() {
  if (ABSL_PREDICT_TRUE(t_cache.serial == serial_)) return t_cache.state;
  return RegisterThread();
}

WriterThread* TraceWriter::RegisterThread() {
  std::lock_guard<std::mutex> lock(threads_mu_);
  // A thread id is reused only after its thread ended, so the new thread can take over the old state and chunk.
  std::unique_ptr<WriterThread>& state = threads_[std::this_thread::get_id()];
  if (state == nullptr) state = std::make_unique<WriterThread>();
  t_cache = {serial_, state.get()};
  return state.get();
}

bool TraceWriter::Writable() const {
  return !failed_.load(std::memory_order_relaxed) &&
         fork_generation_ == g_fork_generation.load(std::memory_order_relaxed);
}

bool TraceWriter::Reserve(WriterThread* t, size_t bytes) {
  if (ABSL_PREDICT_TRUE(t->remaining() >= bytes)) return true;
  return TakeChunk(t, bytes);
}

bool TraceWriter::TakeChunk(WriterThread* t, size_t min_payload) {
  const size_t capacity = RoundUp(internal::kChunkHeaderBytes + min_payload, chunk_bytes_);
  if (capacity > internal::kMaxChunkBytes) return false;  // a record no reader would accept
  uint64_t offset;
  uint32_t sequence;
  void* base;
  {
    std::lock_guard<std::mutex> lock(chunk_mu_);
    if (failed_.load()) return false;
    offset = next_chunk_offset_;
    // fallocate reserves the blocks now: a sparse file that cannot be filled later would turn a full disk into SIGBUS
    // inside the program. Filesystems without fallocate get a plain (sparse) extension.
    if (fallocate(fd_->get(), 0, static_cast<off_t>(offset), static_cast<off_t>(capacity)) != 0 &&
        (errno != EOPNOTSUPP || ftruncate(fd_->get(), static_cast<off_t>(offset + capacity)) != 0)) {
      failed_.store(true);
      return false;
    }
    base = mmap(nullptr, capacity, PROT_READ | PROT_WRITE, MAP_SHARED, fd_->get(), static_cast<off_t>(offset));
    if (base == MAP_FAILED) {
      failed_.store(true);
      return false;
    }
    next_chunk_offset_ += capacity;
    sequence = next_chunk_sequence_++;
    Atomic64(header_->base() + internal::kExpectedBytesOffset)->store(next_chunk_offset_, std::memory_order_relaxed);
  }
  t->chunk = internal::ChunkMapping(static_cast<uint8_t*>(base), capacity);
  t->used = 0;
  t->delta = internal::DeltaState();
  uint8_t* header = t->chunk.base();
  internal::StoreLe64(header + internal::kChunkCapacityOffset, capacity);
  internal::StoreLe32(header + internal::kChunkThreadOffset, CurrentTid());
  internal::StoreLe32(header + internal::kChunkSequenceOffset, sequence);
  t->committed()->store(0, std::memory_order_relaxed);
  // The magic goes last: a chunk without it is one that was never used.
  reinterpret_cast<std::atomic<uint32_t>*>(header + internal::kChunkMagicOffset)
      ->store(internal::kChunkMagic, std::memory_order_release);
  return true;
}

template <typename EncodeFn>
void TraceWriter::AppendHot(uint8_t type, EncodeFn&& encode) {
  WriterThread* t = CurrentThread();
  if (ABSL_PREDICT_FALSE(!Writable()) || !Reserve(t, internal::kMaxRecordHeaderBytes + internal::kMaxHotPayloadBytes)) {
    WriterThread::Bump(t->dropped, 1);
    CountDropped();
    return;
  }
  // Encode after Reserve: a new chunk resets the delta state.
  uint8_t payload[internal::kMaxHotPayloadBytes];
  internal::Encoder e(payload);
  encode(e, t->delta);
  internal::Encoder out(t->cursor());
  out.Byte(type);
  out.Varint(e.size());
  out.Bytes(payload, e.size());
  t->Commit(out.size());
}

template <typename EncodeFn>
void TraceWriter::AppendCold(WriterThread* t, uint8_t type, EncodeFn&& encode) {
  internal::SizeCounter counter;
  encode(counter);
  const size_t total = 1 + VarintSize(counter.size()) + counter.size();
  if (!Writable() || !Reserve(t, total)) {
    WriterThread::Bump(t->dropped, 1);
    CountDropped();
    return;
  }
  internal::Encoder out(t->cursor());
  out.Byte(type);
  out.Varint(counter.size());
  encode(out);
  t->Commit(out.size());
}

void TraceWriter::WriteApiCall(const ApiCallRecord& call) {
  AppendHot(static_cast<uint8_t>(internal::RecordType::kApiCall),
            [&](internal::Encoder& e, internal::DeltaState& d) { internal::EncodeApiCall(e, d, call); });
}

void TraceWriter::WriteKernel(const KernelRecord& kernel) {
  AppendHot(static_cast<uint8_t>(internal::RecordType::kKernel),
            [&](internal::Encoder& e, internal::DeltaState& d) { internal::EncodeKernel(e, d, kernel); });
}

void TraceWriter::WriteMemory(const MemoryActivity& memory) {
  AppendHot(static_cast<uint8_t>(internal::RecordType::kMemory),
            [&](internal::Encoder& e, internal::DeltaState& d) { internal::EncodeMemory(e, d, memory); });
}

void TraceWriter::WriteAllocation(const AllocatorEvent& allocation) {
  AppendHot(static_cast<uint8_t>(internal::RecordType::kAllocation),
            [&](internal::Encoder& e, internal::DeltaState& d) { internal::EncodeAllocation(e, d, allocation); });
}

void TraceWriter::WriteGraphLaunch(const GraphLaunchActivity& launch) {
  AppendHot(static_cast<uint8_t>(internal::RecordType::kGraphLaunch),
            [&](internal::Encoder& e, internal::DeltaState& d) { internal::EncodeGraphLaunch(e, d, launch); });
}

void TraceWriter::WriteNvtx(const NvtxEvent& event) {
  AppendHot(static_cast<uint8_t>(internal::RecordType::kNvtx),
            [&](internal::Encoder& e, internal::DeltaState& d) { internal::EncodeNvtx(e, d, event); });
}

void TraceWriter::WriteDevice(const DeviceInfo& device) {
  AppendCold(CurrentThread(), static_cast<uint8_t>(internal::RecordType::kDevice),
             [&](auto& e) { internal::EncodeDevice(e, device); });
}

void TraceWriter::WriteEnvironment(const Environment& environment) {
  AppendCold(CurrentThread(), static_cast<uint8_t>(internal::RecordType::kEnvironment),
             [&](auto& e) { internal::EncodeEnvironment(e, environment); });
}

void TraceWriter::WriteRecorderStatus(const RecorderStatus& status) {
  AppendCold(CurrentThread(), static_cast<uint8_t>(internal::RecordType::kRecorderStatus),
             [&](auto& e) { internal::EncodeRecorderStatus(e, status); });
}

void TraceWriter::WriteLaunchWindowEdge(bool open, uint64_t time_ns) {
  const internal::WindowEdge edge = open ? internal::WindowEdge::kOpen : internal::WindowEdge::kClose;
  AppendCold(CurrentThread(), static_cast<uint8_t>(internal::RecordType::kLaunchWindowEdge),
             [&](auto& e) { internal::EncodeLaunchWindowEdge(e, edge, time_ns); });
}

void TraceWriter::WriteProcess(WriterThread* t, const ProcessInfo& process) {
  AppendCold(t, static_cast<uint8_t>(internal::RecordType::kProcess),
             [&](auto& e) { internal::EncodeProcess(e, process); });
}

void TraceWriter::WriteString(WriterThread* t, StringId id, absl::string_view s) {
  AppendCold(t, static_cast<uint8_t>(internal::RecordType::kString),
             [&](auto& e) { internal::EncodeString(e, id, s); });
}

void TraceWriter::WriteBacktrace(WriterThread* t, BacktraceId id, const std::vector<StringId>& frames) {
  AppendCold(t, static_cast<uint8_t>(internal::RecordType::kBacktrace),
             [&](auto& e) { internal::EncodeBacktrace(e, id, frames.data(), frames.size()); });
}

void TraceWriter::WritePythonStack(WriterThread* t, PythonStackId id, const std::vector<PythonFrameRef>& frames) {
  AppendCold(t, static_cast<uint8_t>(internal::RecordType::kPythonStack),
             [&](auto& e) { internal::EncodePythonStack(e, id, frames.data(), frames.size()); });
}

StringId TraceWriter::InternString(absl::string_view s) {
  if (s.empty()) return 0;
  WriterThread* t = CurrentThread();
  if (auto it = t->strings.find(s); it != t->strings.end()) return it->second;
  InternShard<std::string>& shard = (*string_shards_)[absl::Hash<absl::string_view>()(s) % kShards];
  StringId id;
  {
    std::lock_guard<std::mutex> lock(shard.mu);
    if (auto it = shard.ids.find(s); it != shard.ids.end()) {
      id = it->second;
    } else {
      id = next_string_id_.fetch_add(1);
      // Written before any other thread can see the id, so a record that uses it never precedes its string.
      WriteString(t, id, s);
      shard.ids.emplace(std::string(s), id);
    }
  }
  t->strings.emplace(std::string(s), id);
  return id;
}

template <typename Key, typename WriteFn>
uint32_t TraceWriter::Intern(std::array<InternShard<Key>, kShards>& shards, std::atomic<uint32_t>& next_id,
                             const Key& key, WriteFn write) {
  InternShard<Key>& shard = shards[absl::Hash<Key>()(key) % kShards];
  std::lock_guard<std::mutex> lock(shard.mu);
  if (auto it = shard.ids.find(key); it != shard.ids.end()) return it->second;
  const uint32_t id = next_id.fetch_add(1);
  write(id);  // before any other thread can see the id
  shard.ids.emplace(key, id);
  return id;
}

BacktraceId TraceWriter::AddBacktrace(const std::vector<StringId>& frames) {
  if (frames.empty()) return 0;
  WriterThread* t = CurrentThread();
  return Intern(*backtrace_shards_, next_backtrace_id_, frames, [&](BacktraceId id) { WriteBacktrace(t, id, frames); });
}

PythonStackId TraceWriter::AddPythonStack(const std::vector<PythonFrameRef>& frames) {
  if (frames.empty()) return 0;
  WriterThread* t = CurrentThread();
  return Intern(*python_shards_, next_python_stack_id_, frames,
                [&](PythonStackId id) { WritePythonStack(t, id, frames); });
}

absl::Status TraceWriter::ReopenForChild(const std::string& path, const ProcessInfo& process) {
  absl::StatusOr<int> fd = CreateFile(path, data_offset_, chunk_bytes_);
  if (!fd.ok()) {
    failed_.store(true);
    return fd.status();
  }
  {
    std::lock_guard<std::mutex> lock(chunk_mu_);
    fd_ = std::make_unique<Fd>(*fd);
    next_chunk_offset_ = data_offset_;
    next_chunk_sequence_ = 0;
    header_.reset();  // the parent's first page: unmapped here, untouched in the parent
  }
  {
    std::lock_guard<std::mutex> lock(threads_mu_);
    for (auto& [id, state] : threads_) {
      state->chunk.reset();  // the parent's chunk: unmapped here, untouched in the parent
      state->used = 0;
      state->records.store(0);
      state->bytes.store(0);
      state->dropped.store(0);
    }
  }
  path_ = path;
  fork_generation_ = g_fork_generation.load();
  if (!MapHeader()) {
    failed_.store(true);
    return ErrnoStatus("map", path);
  }
  failed_.store(false);
  WriterThread* t = CurrentThread();
  WriteProcess(t, process);
  for (InternShard<std::string>& shard : *string_shards_) {
    std::lock_guard<std::mutex> lock(shard.mu);
    for (const auto& [s, id] : shard.ids) WriteString(t, id, s);
  }
  for (InternShard<std::vector<StringId>>& shard : *backtrace_shards_) {
    std::lock_guard<std::mutex> lock(shard.mu);
    for (const auto& [frames, id] : shard.ids) WriteBacktrace(t, id, frames);
  }
  for (InternShard<std::vector<PythonFrameRef>>& shard : *python_shards_) {
    std::lock_guard<std::mutex> lock(shard.mu);
    for (const auto& [frames, id] : shard.ids) WritePythonStack(t, id, frames);
  }
  if (failed_.load()) return absl::ResourceExhaustedError(absl::StrCat("cannot grow trace file '", path, "'"));
  return absl::OkStatus();
}

void TraceWriter::LockForFork() {
  for (InternShard<std::string>& shard : *string_shards_) shard.mu.lock();
  for (InternShard<std::vector<StringId>>& shard : *backtrace_shards_) shard.mu.lock();
  for (InternShard<std::vector<PythonFrameRef>>& shard : *python_shards_) shard.mu.lock();
  threads_mu_.lock();
  chunk_mu_.lock();
}

void TraceWriter::UnlockAfterFork() {
  chunk_mu_.unlock();
  threads_mu_.unlock();
  for (InternShard<std::vector<PythonFrameRef>>& shard : *python_shards_) shard.mu.unlock();
  for (InternShard<std::vector<StringId>>& shard : *backtrace_shards_) shard.mu.unlock();
  for (InternShard<std::string>& shard : *string_shards_) shard.mu.unlock();
}

uint64_t TraceWriter::SumOverThreads(std::atomic<uint64_t> WriterThread::*counter) const {
  std::lock_guard<std::mutex> lock(threads_mu_);
  uint64_t total = 0;
  for (const auto& [id, state] : threads_) total += ((*state).*counter).load(std::memory_order_relaxed);
  return total;
}

uint64_t TraceWriter::bytes_written() const { return SumOverThreads(&WriterThread::bytes); }
uint64_t TraceWriter::records_written() const { return SumOverThreads(&WriterThread::records); }
uint64_t TraceWriter::records_dropped() const { return SumOverThreads(&WriterThread::dropped); }

}  // namespace graphcheck::trace
