// Crash handling (crash_handler.h). Everything the handler does is async-signal-safe: the message is preformatted at
// install time and completed with integer formatting by hand, written with write(2); backtrace() was called once at
// install (its first call loads libgcc's unwinder, which is not safe in a handler); the hook only stores through the
// trace's mapping. No malloc, no stdio, no locks, no CUPTI.
#include "capture/crash_handler.h"

#include <execinfo.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstring>

namespace graphcheck::capture {
namespace {

constexpr int kCrashSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
constexpr size_t kSignals = sizeof(kCrashSignals) / sizeof(int);
struct sigaction g_previous_actions[kSignals];
CrashHooks g_hooks;
char g_prefix[64];  // "graphcheck: pid 1234 received signal ", made at install

// Appends `text` (NUL-terminated) to buf[*n], bounded by `size`.
void Append(char* buf, size_t size, size_t* n, const char* text) {
  while (*text != '\0' && *n + 1 < size) buf[(*n)++] = *text++;
}

void AppendNumber(char* buf, size_t size, size_t* n, long value) {
  char digits[24];
  int d = 0;
  unsigned long v = value < 0 ? static_cast<unsigned long>(-value) : static_cast<unsigned long>(value);
  do {
    digits[d++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0 && d < 20);
  if (value < 0) digits[d++] = '-';
  while (d > 0 && *n + 1 < size) buf[(*n)++] = digits[--d];
}

void WriteAll(const char* buf, size_t n) {
  while (n > 0) {
    const ssize_t written = write(STDERR_FILENO, buf, n);
    if (written <= 0) return;
    buf += written;
    n -= static_cast<size_t>(written);
  }
}

void OnCrashSignal(int signal, siginfo_t*, void*) {
  static std::atomic<bool> handled{false};
  if (!handled.exchange(true)) {
    // Say where the program died: the frames tell a crash in the program from one in the recorder.
    char line[512];
    size_t n = 0;
    Append(line, sizeof(line), &n, g_prefix);
    AppendNumber(line, sizeof(line), &n, signal);
    const char* recording = g_hooks.recording_api != nullptr ? g_hooks.recording_api() : nullptr;
    if (recording != nullptr) {
      Append(line, sizeof(line), &n, " while the recorder handled ");
      Append(line, sizeof(line), &n, recording);
    }
    Append(line, sizeof(line), &n, "; backtrace:\n");
    WriteAll(line, n);
    void* frames[64];
    backtrace_symbols_fd(frames, backtrace(frames, 64), STDERR_FILENO);
    if (g_hooks.on_crash != nullptr) g_hooks.on_crash(signal);
  }
  // Chain: the program's own handler (Python's faulthandler, say) or the default action runs next. The signal is
  // blocked while this handler runs, so the raise is delivered to the previous action as soon as it returns; a
  // hardware fault would also recur there when the instruction runs again.
  for (size_t i = 0; i < kSignals; ++i) {
    if (kCrashSignals[i] == signal) sigaction(signal, &g_previous_actions[i], nullptr);
  }
  raise(signal);
}

}  // namespace

void InstallCrashHandlers(const CrashHooks& hooks) {
  g_hooks = hooks;
  size_t n = 0;
  Append(g_prefix, sizeof(g_prefix), &n, "graphcheck: pid ");
  AppendNumber(g_prefix, sizeof(g_prefix), &n, static_cast<long>(getpid()));
  Append(g_prefix, sizeof(g_prefix), &n, " received signal ");
  g_prefix[n] = '\0';
  void* warm[4];
  backtrace(warm, 4);  // loads the unwinder now, outside any signal handler
  struct sigaction action = {};
  action.sa_sigaction = &OnCrashSignal;
  action.sa_flags = SA_SIGINFO | SA_RESETHAND | SA_ONSTACK;
  sigemptyset(&action.sa_mask);
  for (size_t i = 0; i < kSignals; ++i) sigaction(kCrashSignals[i], &action, &g_previous_actions[i]);
}

}  // namespace graphcheck::capture
