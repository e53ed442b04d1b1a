#include "core/file_io.h"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <utility>

#include "absl/strings/str_cat.h"

namespace graphcheck {
namespace {

absl::Status ErrnoStatus(absl::string_view what, absl::string_view path, int err) {
  std::string message = absl::StrCat("cannot ", what, " '", path, "': ", std::strerror(err));
  if (err == ENOENT) return absl::NotFoundError(message);
  if (err == EACCES || err == EPERM) return absl::PermissionDeniedError(message);
  return absl::InvalidArgumentError(message);
}

absl::string_view FileTypeName(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a pipe";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// Writes all of `bytes` to `fd`, retrying short writes and EINTR; false with errno set on failure.
bool WriteAll(int fd, absl::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EIO;
      return false;
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// Holds SIGXFSZ off for its lifetime: past RLIMIT_FSIZE a write then fails with EFBIG, and the caller cleans up,
// where the default action would kill graphcheck and leave the temporary file behind.
class HoldOffFileSizeSignal {
 public:
  HoldOffFileSizeSignal() {
    struct sigaction ignore = {};
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGXFSZ, &ignore, &previous_);
  }
  ~HoldOffFileSizeSignal() { sigaction(SIGXFSZ, &previous_, nullptr); }
  HoldOffFileSizeSignal(const HoldOffFileSizeSignal&) = delete;
  HoldOffFileSizeSignal& operator=(const HoldOffFileSizeSignal&) = delete;

 private:
  struct sigaction previous_ = {};
};

absl::Status WriteInPlace(const std::string& path, absl::string_view contents) {
  ScopedFd fd(open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NONBLOCK));
  if (fd.get() < 0) return ErrnoStatus("open", path, errno);
  // Non-blocking only for the open (a FIFO without a reader must not hang graphcheck); writes block as usual.
  fcntl(fd.get(), F_SETFL, fcntl(fd.get(), F_GETFL) & ~O_NONBLOCK);
  if (!WriteAll(fd.get(), contents)) return ErrnoStatus("write", path, errno);
  return absl::OkStatus();
}

// The files RemoveOnSignal covers. A slot is free, being filled, or live; the handler reads only live slots.
enum SlotState : int { kSlotFree, kSlotFilling, kSlotLive };
struct RemovalSlot {
  std::atomic<int> state{kSlotFree};
  char path[PATH_MAX];
};
constexpr int kRemovalSlots = 8;
RemovalSlot removal_slots[kRemovalSlots];
// Every signal whose default action ends the process without graphcheck asking for it: SIGQUIT (Ctrl-\) and SIGPIPE
// (a closed pipe downstream) end it as surely as SIGINT does.
constexpr int kRemovalSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGALRM, SIGUSR1, SIGUSR2};

extern "C" void RemoveFilesAndReraise(int signal) {
  const int saved_errno = errno;
  for (RemovalSlot& slot : removal_slots) {
    if (slot.state.load(std::memory_order_acquire) == kSlotLive) unlink(slot.path);
  }
  errno = saved_errno;
  // SA_RESETHAND put the default action back; the signal is blocked until the handler returns, then ends the process.
  raise(signal);
}

// Once per process, for each signal whose action is still the default: a program embedding graphcheck's code, or a
// shell that made graphcheck ignore SIGINT (a background job), keeps its own choice.
void InstallRemovalHandlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (int signal : kRemovalSignals) {
      struct sigaction current = {};
      if (sigaction(signal, nullptr, &current) != 0 || current.sa_handler != SIG_DFL) continue;
      struct sigaction action = {};
      action.sa_handler = RemoveFilesAndReraise;
      sigemptyset(&action.sa_mask);
      action.sa_flags = SA_RESETHAND;
      sigaction(signal, &action, nullptr);
    }
  });
}

std::string DirectoryOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string BaseName(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

ScopedFd::~ScopedFd() {
  if (fd_ >= 0) close(fd_);
}

ScopedFd& ScopedFd::operator=(ScopedFd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) close(fd_);
    fd_ = other.release();
  }
  return *this;
}

int ScopedFd::release() { return std::exchange(fd_, -1); }

RemoveOnSignal::RemoveOnSignal(const std::string& path) {
  if (path.size() >= PATH_MAX) return;
  InstallRemovalHandlers();
  for (int i = 0; i < kRemovalSlots; ++i) {
    int expected = kSlotFree;
    if (!removal_slots[i].state.compare_exchange_strong(expected, kSlotFilling, std::memory_order_acquire)) continue;
    std::memcpy(removal_slots[i].path, path.c_str(), path.size() + 1);
    removal_slots[i].state.store(kSlotLive, std::memory_order_release);
    slot_ = i;
    return;
  }
}

RemoveOnSignal::~RemoveOnSignal() {
  if (slot_ >= 0) removal_slots[slot_].state.store(kSlotFree, std::memory_order_release);
}

absl::StatusOr<ScopedFd> OpenRegularFile(const std::string& path, absl::string_view what, uint64_t* size) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer forever.
  ScopedFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
  if (fd.get() < 0) return ErrnoStatus(absl::StrCat("open ", what), path, errno);
  struct stat info;
  if (fstat(fd.get(), &info) != 0) return ErrnoStatus(absl::StrCat("read ", what), path, errno);
  if (!S_ISREG(info.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat(what, " '", path, "' is ", FileTypeName(info.st_mode)));
  }
  if (fcntl(fd.get(), F_SETFL, fcntl(fd.get(), F_GETFL) & ~O_NONBLOCK) != 0) {
    return ErrnoStatus(absl::StrCat("read ", what), path, errno);
  }
  *size = static_cast<uint64_t>(info.st_size);
  return fd;
}

absl::StatusOr<std::string> ReadInputFile(const std::string& path, const InputKind& kind) {
  uint64_t size = 0;
  absl::StatusOr<ScopedFd> opened = OpenRegularFile(path, kind.what, &size);
  if (!opened.ok()) return opened.status();
  const ScopedFd fd = *std::move(opened);
  if (size > kind.max_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(kind.what, " '", path, "' is ", size, " bytes; graphcheck reads at most ", kind.max_bytes));
  }
  std::string contents(size, '\0');
  uint64_t done = 0;
  while (done < size) {
    const ssize_t n = read(fd.get(), contents.data() + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoStatus(absl::StrCat("read ", kind.what), path, errno);
    if (n == 0) break;  // shrank while being read
    done += static_cast<uint64_t>(n);
  }
  contents.resize(done);
  return contents;
}

absl::Status WriteFileAtomically(const std::string& path, absl::string_view contents) {
  struct stat link_info;
  if (lstat(path.c_str(), &link_info) == 0) {
    struct stat target_info;
    // A device or FIFO (also behind a link, as /dev/stdout is) is written in place: renaming over it would replace
    // it. A link to anything else is replaced by the new file, never written through.
    const bool special =
        !S_ISLNK(link_info.st_mode)
            ? !S_ISREG(link_info.st_mode)
            : stat(path.c_str(), &target_info) == 0 && !S_ISREG(target_info.st_mode) && !S_ISDIR(target_info.st_mode);
    if (S_ISDIR(link_info.st_mode)) return absl::InvalidArgumentError(absl::StrCat("'", path, "' is a directory"));
    if (special) return WriteInPlace(path, contents);
  }
  std::string temporary = absl::StrCat(DirectoryOf(path), "/.", BaseName(path), ".XXXXXX");
  const HoldOffFileSizeSignal hold_off;
  ScopedFd fd(mkostemp(temporary.data(), O_CLOEXEC));
  if (fd.get() < 0) return ErrnoStatus("create a temporary file for", path, errno);
  const RemoveOnSignal remove_on_signal(temporary);
  const bool written = WriteAll(fd.get(), contents);
  const int write_errno = errno;
  // mkstemp makes the file 0600; a report is an ordinary file of the user's (umask applies).
  const mode_t mask = umask(0);
  umask(mask);
  fchmod(fd.get(), 0666 & ~mask);
  const bool closed = close(fd.release()) == 0;
  if (!written || !closed) {
    const int err = !written ? write_errno : errno;
    unlink(temporary.c_str());
    return ErrnoStatus("write", path, err);
  }
  if (rename(temporary.c_str(), path.c_str()) != 0) {
    const int err = errno;
    unlink(temporary.c_str());
    return ErrnoStatus("rename a temporary file onto", path, err);
  }
  return absl::OkStatus();
}

}  // namespace graphcheck
