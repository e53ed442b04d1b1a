// Crash handling (crash_handler.h).
#include "capture/crash_handler.h"

#include <execinfo.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>

namespace graphcheck::capture {
namespace {

constexpr int kCrashSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
struct sigaction g_previous_actions[sizeof(kCrashSignals) / sizeof(int)];
CrashHooks g_hooks;

void OnCrashSignal(int signal, siginfo_t*, void*) {
  static std::atomic<bool> flushing{false};
  if (!flushing.exchange(true)) {
    // Say where the program died: the frames tell a crash in the program from one in the recorder.
    char header[256];
    const char* recording = g_hooks.recording_api != nullptr ? g_hooks.recording_api() : nullptr;
    const int length = snprintf(
        header, sizeof(header), "graphcheck: pid %d received signal %d%s%s; backtrace:\n", static_cast<int>(getpid()),
        signal, recording != nullptr ? " while the recorder handled " : "", recording != nullptr ? recording : "");
    (void)!write(STDERR_FILENO, header, length);
    void* frames[64];
    backtrace_symbols_fd(frames, backtrace(frames, 64), STDERR_FILENO);
    if (g_hooks.on_crash != nullptr) g_hooks.on_crash(signal);
  }
  for (size_t i = 0; i < sizeof(kCrashSignals) / sizeof(int); ++i) {
    if (kCrashSignals[i] != signal) continue;
    sigaction(signal, &g_previous_actions[i], nullptr);
  }
  raise(signal);
}

}  // namespace

void InstallCrashHandlers(const CrashHooks& hooks) {
  g_hooks = hooks;
  struct sigaction action = {};
  action.sa_sigaction = &OnCrashSignal;
  action.sa_flags = SA_SIGINFO | SA_RESETHAND;
  sigemptyset(&action.sa_mask);
  for (size_t i = 0; i < sizeof(kCrashSignals) / sizeof(int); ++i) {
    sigaction(kCrashSignals[i], &action, &g_previous_actions[i]);
  }
}

}  // namespace graphcheck::capture
