// TraceWriter: appends one process's events to a trace file (docs/trace-format.md) from any number of threads, cheaply
// enough to run inside CUPTI callbacks, and so that nothing already appended is lost when the process crashes, is
// killed, calls _exit or forks.
//
// How: the file is mapped with mmap(MAP_SHARED), so each record is in the kernel's page cache the moment it is
// stored; there is nothing to flush. Each thread appends to its own chunk of the file (no lock, no atomic
// read-modify-write: one release-store of the chunk's committed byte count per record). Taking a new chunk, and the
// first sighting of a string or backtrace, take a lock.
//
// Fork: the writer installs pthread_atfork handlers that keep its locks consistent across fork() and make a child
// drop (not write) records until the child calls ReopenForChild with its own file; the parent's file then only ever
// holds the parent's records.
#ifndef GRAPHCHECK_TRACE_TRACE_WRITER_H_
#define GRAPHCHECK_TRACE_TRACE_WRITER_H_

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "trace/events.h"

namespace graphcheck::trace {

namespace internal {
struct WriterThread;
class ChunkMapping;
}  // namespace internal

class TraceWriter {
 public:
  struct Options {
    // Chunk granularity; rounded up to a multiple of the page size. Each writing thread holds one chunk, so this is
    // also the disk space reserved per thread ahead of use.
    size_t chunk_bytes = 256 * 1024;
    // The clock of loss times (LossCount::first_ns / last_ns): the recorder passes CUPTI's, so losses line up with
    // the events. Null: CLOCK_MONOTONIC.
    uint64_t (*clock)() = nullptr;
  };

  // Creates (truncates) `path` and writes the header and `process`.
  static absl::StatusOr<std::unique_ptr<TraceWriter>> Create(const std::string& path, const ProcessInfo& process);
  static absl::StatusOr<std::unique_ptr<TraceWriter>> Create(const std::string& path, const ProcessInfo& process,
                                                             const Options& options);
  // Only once no thread writes any more. Not needed for the data: everything appended is already in the file (the
  // recorder may simply never destroy its writer).
  ~TraceWriter();
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;

  // Returns the id of `s`, writing a string record the first time the process sees it. Repeated strings cost a lookup
  // in a per-thread cache (no lock). "" is always 0.
  StringId InternString(absl::string_view s);
  // Returns the id of this frame list (0 for an empty one), writing a backtrace record the first time.
  BacktraceId AddBacktrace(const std::vector<StringId>& frames);
  // Returns the id of this Python stack (0 for an empty one), writing a python-stack record the first time.
  PythonStackId AddPythonStack(const std::vector<PythonFrameRef>& frames);

  // All thread-safe and lock-free on the common path. A record that cannot be written (disk full, or a forked child
  // that has not reopened) is dropped and counted in records_dropped().
  void WriteApiCall(const ApiCallRecord& call);
  void WriteKernel(const KernelRecord& kernel);
  void WriteMemory(const MemoryActivity& memory);
  void WriteAllocation(const AllocatorEvent& allocation);
  void WriteGraphLaunch(const GraphLaunchActivity& launch);
  void WriteNvtx(const NvtxEvent& event);
  void WriteDevice(const DeviceInfo& device);
  void WriteEnvironment(const Environment& environment);
  void WriteRecorderStatus(const RecorderStatus& status);
  // An event of the Python probe (capture contexts, exceptions, replays, torch.compile's CUDA-graph decisions).
  void WriteProbeEvent(const ProbeEvent& event);
  // An output of a graphed module compared with its eager forward (`graphcheck run --shadow N`).
  void WriteShadowComparison(const ShadowComparison& comparison);
  // Where a thread waited past --hang-timeout (then MarkEnd(TraceEnd::kHung)).
  void WriteHang(const Hang& hang);
  // What a captured graph's nodes name of device memory, when its capture ended (format 1.10).
  void WriteGraphManifest(const GraphManifest& manifest);
  // The name of a thread, once, at its first CUDA call.
  void WriteThreadName(const ThreadName& thread);
  // A sampling window of launch recording opens or closes at `time_ns` (LaunchRecording::kSampled).
  void WriteLaunchWindowEdge(bool open, uint64_t time_ns);

  // Accounting, in the file's first page (docs/trace-format.md, "Loss table"): `count` records of `kind` were lost
  // now. Lock-free and async-signal-safe; a forked child that has not reopened counts nothing (the page is its
  // parent's).
  void CountLoss(LossKind kind, uint64_t count);
  // A loss event worth naming (a failed call and its code, CUPTI's drops on one context and stream), as a record.
  void WriteRecorderError(const RecorderError& error);
  // How the process ended, in the file header (async-signal-safe: plain stores through the mapping). A trace whose
  // writer never gets here reads as TraceEnd::kRunning: killed, or _exit.
  void MarkEnd(TraceEnd end, int signal = 0);

  // In the child after fork() (call it from a pthread_atfork child handler or right after fork returns): moves this
  // writer to a new file holding `process` and every string and backtrace interned so far, so ids stay valid. Uses
  // open/pwrite/fallocate/mmap/munmap, and the heap only to copy `path` (glibc's fork leaves malloc usable in the
  // child). The parent's file is unmapped in the child, never written.
  absl::Status ReopenForChild(const std::string& path, const ProcessInfo& process);

  const std::string& path() const { return path_; }
  // Record bytes (headers included) and records appended to the current file, over all threads.
  uint64_t bytes_written() const;
  uint64_t records_written() const;
  uint64_t records_dropped() const;

 private:
  class Fd;
  template <typename Key>
  struct InternShard;
  static constexpr size_t kShards = 16;

  TraceWriter(std::string path, std::unique_ptr<Fd> fd, size_t chunk_bytes, size_t data_offset, uint64_t (*clock)());
  // Maps the file's first page (header and loss table) and marks the trace running; false when mmap fails.
  bool MapHeader();
  uint64_t Now() const;
  void CountDropped();

  internal::WriterThread* CurrentThread();
  internal::WriterThread* RegisterThread();
  bool Writable() const;
  // Makes room for `bytes` more in the thread's chunk, taking a new chunk if needed; false if the file cannot grow.
  bool Reserve(internal::WriterThread* t, size_t bytes);
  bool TakeChunk(internal::WriterThread* t, size_t min_payload);
  template <typename EncodeFn>
  void AppendHot(uint8_t type, EncodeFn&& encode);
  template <typename EncodeFn>
  void AppendCold(internal::WriterThread* t, uint8_t type, EncodeFn&& encode);
  void WriteString(internal::WriterThread* t, StringId id, absl::string_view s);
  void WriteBacktrace(internal::WriterThread* t, BacktraceId id, const std::vector<StringId>& frames);
  void WritePythonStack(internal::WriterThread* t, PythonStackId id, const std::vector<PythonFrameRef>& frames);
  // The id of `key` in `shards`, writing its record with `write` (under the shard lock) the first time.
  template <typename Key, typename WriteFn>
  uint32_t Intern(std::array<InternShard<Key>, kShards>& shards, std::atomic<uint32_t>& next_id, const Key& key,
                  WriteFn write);
  void WriteProcess(internal::WriterThread* t, const ProcessInfo& process);

  // The fork handlers lock every mutex (in the one order used everywhere: string shards, backtrace shards, Python
  // stack shards, threads, chunks) so the child never inherits one held by a thread that does not exist there.
  friend struct ForkHandlers;
  void LockForFork();
  void UnlockAfterFork();
  uint64_t SumOverThreads(std::atomic<uint64_t> internal::WriterThread::*counter) const;

  const uint64_t serial_;  // tells this writer's per-thread cache entries from other writers'
  std::string path_;
  const size_t chunk_bytes_;
  const size_t data_offset_;
  uint64_t (*const clock_)();
  uint64_t fork_generation_;  // the process's fork count when this writer's file was opened
  std::atomic<bool> failed_{false};

  std::mutex chunk_mu_;
  std::unique_ptr<Fd> fd_;
  std::unique_ptr<internal::ChunkMapping> header_;  // the first page: header and loss table
  uint64_t next_chunk_offset_;
  uint32_t next_chunk_sequence_ = 0;

  mutable std::mutex threads_mu_;
  std::unordered_map<std::thread::id, std::unique_ptr<internal::WriterThread>> threads_;

  std::unique_ptr<std::array<InternShard<std::string>, kShards>> string_shards_;
  std::unique_ptr<std::array<InternShard<std::vector<StringId>>, kShards>> backtrace_shards_;
  std::unique_ptr<std::array<InternShard<std::vector<PythonFrameRef>>, kShards>> python_shards_;
  std::atomic<uint32_t> next_string_id_{1};
  std::atomic<uint32_t> next_backtrace_id_{1};
  std::atomic<uint32_t> next_python_stack_id_{1};
};

}  // namespace graphcheck::trace

#endif  // GRAPHCHECK_TRACE_TRACE_WRITER_H_
