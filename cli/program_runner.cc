#include "cli/program_runner.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

extern char** environ;

namespace graphcheck {
namespace {

constexpr size_t kMaxKeptStderrBytes = 16 << 20;  // enough for any traceback; a runaway logger must not eat memory

std::atomic<pid_t> g_child{0};

void ForwardSignal(int signal) {
  const pid_t child = g_child.load();
  if (child > 0) kill(child, signal);
}

// Restores the previous SIGINT/SIGTERM actions on scope exit.
class ForwardSignals {
 public:
  ForwardSignals() {
    struct sigaction action = {};
    action.sa_handler = &ForwardSignal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    sigaction(SIGINT, &action, &previous_int_);
    sigaction(SIGTERM, &action, &previous_term_);
  }
  ~ForwardSignals() {
    sigaction(SIGINT, &previous_int_, nullptr);
    sigaction(SIGTERM, &previous_term_, nullptr);
  }

 private:
  struct sigaction previous_int_ = {};
  struct sigaction previous_term_ = {};
};

// Closes a descriptor on scope exit.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() { Close(); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  void Close() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

}  // namespace

absl::StatusOr<ProgramResult> RunProgram(const std::vector<std::string>& command,
                                         const std::map<std::string, std::string>& extra_environment) {
  if (command.empty()) return absl::InvalidArgumentError("no program given: graphcheck run [options] -- CMD ARGS...");
  int stderr_pipe[2];
  int exec_error_pipe[2];  // CLOEXEC: closes silently on a successful exec, carries errno on a failed one
  if (pipe(stderr_pipe) != 0 || pipe2(exec_error_pipe, O_CLOEXEC) != 0) {
    return absl::InternalError(absl::StrCat("pipe: ", std::strerror(errno)));
  }
  Fd stderr_read(stderr_pipe[0]), stderr_write(stderr_pipe[1]);
  Fd error_read(exec_error_pipe[0]), error_write(exec_error_pipe[1]);

  std::vector<std::string> environment;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string variable = *entry;
    if (extra_environment.count(variable.substr(0, variable.find('='))) == 0) environment.push_back(variable);
  }
  for (const auto& [name, value] : extra_environment) environment.push_back(absl::StrCat(name, "=", value));
  std::vector<char*> argv, envp;
  for (const std::string& arg : command) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  for (const std::string& variable : environment) envp.push_back(const_cast<char*>(variable.c_str()));
  envp.push_back(nullptr);

  ForwardSignals forward;
  const auto start = std::chrono::steady_clock::now();
  const pid_t child = fork();
  if (child < 0) return absl::InternalError(absl::StrCat("fork: ", std::strerror(errno)));
  if (child == 0) {
    dup2(stderr_pipe[1], STDERR_FILENO);
    close(stderr_pipe[0]);
    close(stderr_pipe[1]);
    close(exec_error_pipe[0]);
    execvpe(argv[0], argv.data(), envp.data());
    const int error = errno;
    (void)!write(exec_error_pipe[1], &error, sizeof(error));
    _exit(127);
  }
  g_child.store(child);
  stderr_write.Close();
  error_write.Close();

  int exec_errno = 0;
  if (read(error_read.get(), &exec_errno, sizeof(exec_errno)) == sizeof(exec_errno)) {
    waitpid(child, nullptr, 0);
    g_child.store(0);
    return absl::InvalidArgumentError(absl::StrCat("cannot run '", command[0], "': ", std::strerror(exec_errno)));
  }

  ProgramResult result;
  std::string kept;
  char buffer[65536];
  for (;;) {
    const ssize_t n = read(stderr_read.get(), buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    (void)!write(STDERR_FILENO, buffer, n);
    if (kept.size() < kMaxKeptStderrBytes) kept.append(buffer, n);
  }
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  g_child.store(0);
  result.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
  } else {
    result.exit_code = WEXITSTATUS(status);
  }
  for (absl::string_view line : absl::StrSplit(kept, '\n', absl::SkipEmpty())) result.stderr_lines.emplace_back(line);
  return result;
}

std::string DescribeProgramResult(const ProgramResult& result) {
  if (result.signal != 0) {
    const char* name = sigabbrev_np(result.signal);
    return absl::StrCat("killed by signal ", result.signal, name != nullptr ? absl::StrCat(" (SIG", name, ")") : "");
  }
  return absl::StrCat("exited with status ", result.exit_code);
}

}  // namespace graphcheck
