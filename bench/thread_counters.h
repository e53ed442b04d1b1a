// The CPU time a recorder spends beside a launch-bound benchmark step's launching thread: in the process's other
// threads and in its parent (`graphcheck run`, or the benchmark driver), from the scheduler's per-task run time. The
// work a recorder adds off the launching thread shows here to a tenth of a microsecond per step, where the wall time
// of identical processes differed by up to 30% on the lent machines (which give no hardware instruction counter:
// perf_event_open answered ENOENT). Linux only; a figure that cannot be read is -1.
#ifndef GRAPHCHECK_BENCH_THREAD_COUNTERS_H_
#define GRAPHCHECK_BENCH_THREAD_COUNTERS_H_

#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

namespace graphcheck::bench {

// Nanoseconds a task has run on a CPU: the first field of TASK_DIR/schedstat; -1 when unreadable.
inline int64_t TaskRunNanos(const std::filesystem::path& task_dir) {
  std::ifstream schedstat(task_dir / "schedstat");
  long long nanos = -1;
  if (!(schedstat >> nanos)) return -1;
  return nanos;
}

// Nanoseconds the threads of process `pid` have run, without thread `skip_tid` (0: none); -1 when unreadable.
inline int64_t ProcessRunNanos(pid_t pid, pid_t skip_tid) {
  std::error_code error;
  int64_t total = 0;
  // Threads come and go while the folder is read: no exceptions, and a thread gone before its read counts nothing.
  for (std::filesystem::directory_iterator task("/proc/" + std::to_string(pid) + "/task", error), end;
       !error && task != end; task.increment(error)) {
    if (skip_tid != 0 && task->path().filename() == std::to_string(skip_tid)) continue;
    const int64_t nanos = TaskRunNanos(task->path());
    if (nanos > 0) total += nanos;
  }
  return error ? -1 : total;
}

// CPU time spent beside the launching thread: by the process's other threads and by its parent.
struct BesideCpu {
  int64_t other_threads_ns = -1;
  int64_t parent_ns = -1;

  static BesideCpu Now() {
    const auto self = static_cast<pid_t>(syscall(SYS_gettid));
    return {ProcessRunNanos(getpid(), self), ProcessRunNanos(getppid(), 0)};
  }
};

}  // namespace graphcheck::bench

#endif  // GRAPHCHECK_BENCH_THREAD_COUNTERS_H_
