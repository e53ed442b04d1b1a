// Crash signals (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT): say on stderr where the program died, give the recorder a
// last word (mark the trace crashed), then let the program's previous handler (Python's faulthandler, its own) or the
// default action run. Async-signal-safe throughout; the hooks must be too.
#ifndef GRAPHCHECK_CAPTURE_CRASH_HANDLER_H_
#define GRAPHCHECK_CAPTURE_CRASH_HANDLER_H_

namespace graphcheck::capture {

struct CrashHooks {
  // The API the recorder was handling on the crashing thread, or null.
  const char* (*recording_api)() = nullptr;
  // Runs once, on the first crash signal.
  void (*on_crash)(int signal) = nullptr;
};

// Installs the handlers, keeping the current ones to chain to. Call after the program's own handlers are in place
// when possible; a handler installed later chains to these if it chains at all (faulthandler does).
void InstallCrashHandlers(const CrashHooks& hooks);

}  // namespace graphcheck::capture

#endif  // GRAPHCHECK_CAPTURE_CRASH_HANDLER_H_
