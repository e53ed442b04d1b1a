// Crash signals (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT): say on stderr where the program died, give the recorder a
// last word, then let the program's previous handler (or the default action) run.
#ifndef GRAPHCHECK_CAPTURE_CRASH_HANDLER_H_
#define GRAPHCHECK_CAPTURE_CRASH_HANDLER_H_

namespace graphcheck::capture {

struct CrashHooks {
  // The API the recorder was handling on the crashing thread, or null.
  const char* (*recording_api)() = nullptr;
  // Runs once, on the first crash signal.
  void (*on_crash)(int signal) = nullptr;
};

void InstallCrashHandlers(const CrashHooks& hooks);

}  // namespace graphcheck::capture

#endif  // GRAPHCHECK_CAPTURE_CRASH_HANDLER_H_
