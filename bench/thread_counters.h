// The CPU time a recorder spends beside a launch-bound benchmark step's launching thread: in the process's other
// threads and in its parent (`graphcheck run`, or the benchmark driver), from the scheduler's per-task run time. The
// work a recorder adds off the launching thread shows here to a tenth of a microsecond per step, where the wall time
// of identical processes differed by up to 30% on the lent machines (which give no hardware instruction counter:
// perf_event_open answered ENOENT). Linux only; a figure that cannot be read is -1.
#ifndef GRAPHCHECK_BENCH_THREAD_COUNTERS_H_
#define GRAPHCHECK_BENCH_THREAD_COUNTERS_H_

#include <dirent.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

namespace graphcheck::bench {

// Nanoseconds a task has run on a CPU: the first field of /proc/PID/task/TID/schedstat; -1 when unreadable.
inline int64_t TaskRunNanos(const std::string& task_dir) {
  FILE* file = std::fopen((task_dir + "/schedstat").c_str(), "r");
  if (file == nullptr) return -1;
  long long nanos = -1;
  if (std::fscanf(file, "%lld", &nanos) != 1) nanos = -1;
  std::fclose(file);
  return nanos;
}

// Nanoseconds the threads of process `pid` have run, without thread `skip_tid` (0: none); -1 when unreadable.
inline int64_t ProcessRunNanos(pid_t pid, pid_t skip_tid) {
  const std::string tasks = "/proc/" + std::to_string(pid) + "/task";
  DIR* dir = opendir(tasks.c_str());
  if (dir == nullptr) return -1;
  int64_t total = 0;
  while (const dirent* entry = readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    if (skip_tid != 0 && std::to_string(skip_tid) == entry->d_name) continue;
    const int64_t nanos = TaskRunNanos(tasks + "/" + entry->d_name);
    if (nanos > 0) total += nanos;
  }
  closedir(dir);
  return total;
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
