// Reading the files users hand to graphcheck and writing its outputs, safely for hostile input: every input has a
// documented size limit and must be a regular file (a FIFO, a device such as /dev/zero or a directory is refused at
// once, without blocking or reading), and outputs are written whole through a temporary file that is created
// exclusively (mkstemp) beside the target, never through a link, and removed on every failure path.
#ifndef GRAPHCHECK_CORE_FILE_IO_H_
#define GRAPHCHECK_CORE_FILE_IO_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace graphcheck {

// What an input is, for error messages ("configuration file"), and the most bytes graphcheck accepts of it.
struct InputKind {
  absl::string_view what;
  uint64_t max_bytes;
};

// The documented limits (docs/architecture.md, Failure behaviour).
inline constexpr InputKind kConfigInput{"configuration file", 16ull << 20};
inline constexpr InputKind kOrderInput{"capture order file", 1ull << 20};
inline constexpr InputKind kStderrInput{"stderr file", 512ull << 20};
inline constexpr InputKind kReportInput{"report file", 256ull << 20};
inline constexpr InputKind kEngineResultInput{"engine result", 256ull << 20};
inline constexpr InputKind kTensorInput{"inputs file", 4ull << 30};

// An open file descriptor, closed when it goes out of scope.
class ScopedFd {
 public:
  explicit ScopedFd(int fd = -1) : fd_(fd) {}
  ~ScopedFd();
  ScopedFd(ScopedFd&& other) noexcept : fd_(other.release()) {}
  ScopedFd& operator=(ScopedFd&& other) noexcept;
  ScopedFd(const ScopedFd&) = delete;
  ScopedFd& operator=(const ScopedFd&) = delete;
  int get() const { return fd_; }
  int release();

 private:
  int fd_;
};

// Opens `path` for reading without blocking on a FIFO, and refuses anything but a regular file. Returns the open
// descriptor and, in *size, the file's size. NotFound / PermissionDenied / InvalidArgument name the path.
absl::StatusOr<ScopedFd> OpenRegularFile(const std::string& path, absl::string_view what, uint64_t* size);

// Reads the whole of a regular file of at most kind.max_bytes.
absl::StatusOr<std::string> ReadInputFile(const std::string& path, const InputKind& kind);

// Writes `contents` to `path` whole: into a new temporary file in the same folder (mkstemp: O_EXCL, an unpredictable
// name), then renamed over `path`. A link at `path` is replaced, never written through; a device or FIFO at `path`
// (/dev/null, /dev/stdout, a pipe) is written in place. The temporary file is removed on every failure, including a
// file-size limit (SIGXFSZ is held off while writing, so the write fails instead of killing graphcheck) and a signal
// that ends graphcheck while it is written (RemoveOnSignal).
absl::Status WriteFileAtomically(const std::string& path, absl::string_view contents);

// For its lifetime, a signal that ends graphcheck (SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGALRM, SIGUSR1,
// SIGUSR2, where their action is the default one)
// first removes the file at `path`: the handler unlinks every registered file (unlink is async-signal-safe; the paths
// sit in fixed slots, so the handler neither allocates nor locks), restores the default action and raises the signal
// again, so the process still ends as the signal says. A few files at once are covered; more are not, silently.
class RemoveOnSignal {
 public:
  explicit RemoveOnSignal(const std::string& path);
  ~RemoveOnSignal();
  RemoveOnSignal(const RemoveOnSignal&) = delete;
  RemoveOnSignal& operator=(const RemoveOnSignal&) = delete;

 private:
  int slot_ = -1;  // -1: not covered (all slots taken, or the path too long)
};

}  // namespace graphcheck

#endif  // GRAPHCHECK_CORE_FILE_IO_H_
