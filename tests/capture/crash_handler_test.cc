// The crash path in a plain process (no GPU): a child process writes a trace, installs the crash handlers over a
// handler of its own, and dies. The trace must still read, say how the process ended, and the program's own handler
// must have run after graphcheck's. SIGKILL and _exit have nothing to run: their traces must read as not ended cleanly.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "capture/crash_handler.h"
#include "trace/trace_reader.h"
#include "trace/trace_writer.h"

namespace graphcheck::capture {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

trace::TraceWriter* g_writer = nullptr;
int g_marker_fd = -1;

// The program's own handler, installed before graphcheck's, in the way Python's faulthandler behaves: report, restore
// the default action, re-raise.
void ProgramHandler(int signal) {
  const char text[] = "program handler ran\n";
  (void)!write(g_marker_fd, text, sizeof(text) - 1);
  ::signal(signal, SIG_DFL);
  raise(signal);
}

enum class Death { kSignal, kFault, kKill, kExit, kClean };

struct Outcome {
  int wait_status = 0;
  std::string stderr_text;
  std::string marker;
  trace::Trace trace;
};

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

Outcome Die(const std::string& name, Death death, int signal, bool program_handler = true) {
  const std::string dir = ::testing::TempDir();
  const std::string trace_path = dir + "/crash-" + name + ".gctrace";
  const std::string err_path = dir + "/crash-" + name + ".stderr";
  const std::string marker_path = dir + "/crash-" + name + ".marker";
  const pid_t child = fork();
  if (child == 0) {
    const int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(err, STDERR_FILENO);
    g_marker_fd = open(marker_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    trace::ProcessInfo process;
    process.pid = static_cast<uint32_t>(getpid());
    auto writer = trace::TraceWriter::Create(trace_path, process);
    if (!writer.ok()) _exit(90);
    g_writer = writer->release();
    trace::ApiCallRecord call;
    call.name = g_writer->InternString("cudaStreamSynchronize");
    call.start_ns = 100;
    call.end_ns = 200;
    g_writer->WriteApiCall(call);
    if (signal != 0 && program_handler) ::signal(signal, &ProgramHandler);
    CrashHooks hooks;
    hooks.recording_api = [] { return "cudaStreamSynchronize"; };
    hooks.on_crash = [](int s) { g_writer->MarkEnd(trace::TraceEnd::kCrashed, s); };
    InstallCrashHandlers(hooks);
    switch (death) {
      case Death::kSignal:
        raise(signal);
        break;
      case Death::kFault: {
        volatile int* nowhere = nullptr;
        *nowhere = 1;
        break;
      }
      case Death::kKill:
        raise(SIGKILL);
        break;
      case Death::kExit:
        _exit(0);
      case Death::kClean:
        g_writer->MarkEnd(trace::TraceEnd::kClean);
        _exit(0);
    }
    _exit(91);  // not reached
  }
  Outcome outcome;
  waitpid(child, &outcome.wait_status, 0);
  outcome.stderr_text = Slurp(err_path);
  outcome.marker = Slurp(marker_path);
  absl::StatusOr<trace::Trace> trace = trace::ReadTrace(trace_path);
  EXPECT_TRUE(trace.ok()) << trace.status();
  if (trace.ok()) outcome.trace = *std::move(trace);
  return outcome;
}

void ExpectCrashed(const Outcome& o, int signal) {
  ASSERT_TRUE(WIFSIGNALED(o.wait_status)) << o.wait_status;
  EXPECT_EQ(WTERMSIG(o.wait_status), signal);
  EXPECT_THAT(o.stderr_text, HasSubstr("received signal " + std::to_string(signal) +
                                       " while the recorder handled cudaStreamSynchronize; backtrace:"));
  EXPECT_EQ(o.marker, "program handler ran\n");  // chained to the program's own handler
  EXPECT_EQ(o.trace.integrity.end, trace::TraceEnd::kCrashed);
  EXPECT_EQ(o.trace.integrity.signal, signal);
  EXPECT_EQ(o.trace.api_calls.size(), 1u);
  EXPECT_THAT(o.trace.read_warnings, IsEmpty());
}

TEST(CrashHandlerTest, SegmentationFaultIsMarkedAndChained) {
  ExpectCrashed(Die("segv", Death::kFault, SIGSEGV), SIGSEGV);
}

TEST(CrashHandlerTest, AbortIsMarkedAndChained) { ExpectCrashed(Die("abrt", Death::kSignal, SIGABRT), SIGABRT); }

TEST(CrashHandlerTest, BusErrorIsMarkedAndChained) { ExpectCrashed(Die("bus", Death::kSignal, SIGBUS), SIGBUS); }

TEST(CrashHandlerTest, WithoutAProgramHandlerTheDefaultActionKills) {
  const Outcome o = Die("abrt-default", Death::kSignal, SIGABRT, /*program_handler=*/false);
  ASSERT_TRUE(WIFSIGNALED(o.wait_status));
  EXPECT_EQ(WTERMSIG(o.wait_status), SIGABRT);
  EXPECT_THAT(o.marker, IsEmpty());
  EXPECT_EQ(o.trace.integrity.end, trace::TraceEnd::kCrashed);
}

TEST(CrashHandlerTest, SigkillLeavesAReadableTraceThatDidNotEndCleanly) {
  const Outcome o = Die("kill", Death::kKill, 0);
  ASSERT_TRUE(WIFSIGNALED(o.wait_status));
  EXPECT_EQ(WTERMSIG(o.wait_status), SIGKILL);
  EXPECT_EQ(o.trace.integrity.end, trace::TraceEnd::kRunning);
  EXPECT_EQ(o.trace.api_calls.size(), 1u);
  EXPECT_THAT(o.trace.read_warnings, IsEmpty());
  EXPECT_EQ(o.trace.integrity.expected_bytes, o.trace.integrity.file_bytes);
}

TEST(CrashHandlerTest, UnderscoreExitLeavesAReadableTraceThatDidNotEndCleanly) {
  const Outcome o = Die("exit", Death::kExit, 0);
  ASSERT_TRUE(WIFEXITED(o.wait_status));
  EXPECT_EQ(o.trace.integrity.end, trace::TraceEnd::kRunning);
  EXPECT_EQ(o.trace.api_calls.size(), 1u);
}

TEST(CrashHandlerTest, ACleanStopIsMarked) {
  const Outcome o = Die("clean", Death::kClean, 0);
  ASSERT_TRUE(WIFEXITED(o.wait_status));
  EXPECT_EQ(o.trace.integrity.end, trace::TraceEnd::kClean);
  EXPECT_GT(o.trace.integrity.end_time_ns, 0u);
  EXPECT_THAT(o.stderr_text, IsEmpty());
}

}  // namespace
}  // namespace graphcheck::capture
