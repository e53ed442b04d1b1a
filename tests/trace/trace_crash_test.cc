// Crash safety of the trace writer: a child process writes records and then dies (SIGKILL, SIGSEGV, abort, _exit, or
// killed from outside mid-write); the parent must read back every record the child committed, with no warnings. And
// fork: after fork() each process's file holds only its own records.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "tests/trace/trace_test_events.h"
#include "trace/trace_reader.h"
#include "trace/trace_writer.h"

namespace graphcheck::trace {
namespace {

using ::testing::IsEmpty;

constexpr int kRecords = 3000;

enum class Death { kSigkill, kSigsegv, kAbort, kUnderscoreExit };

// Runs in the forked child; never returns.
[[noreturn]] void WriteThenDie(const std::string& path, Death death) {
  alarm(20);  // a hang becomes a failure, not a stuck test
  absl::StatusOr<std::unique_ptr<TraceWriter>> created = TraceWriter::Create(path, testing::SampleProcess());
  if (!created.ok()) _exit(100);
  // Leaked on purpose: a crashing process runs no destructors.
  TraceWriter* writer = created->release();
  const StringId api = writer->InternString("cudaLaunchKernel");
  const StringId kernel = writer->InternString("gemm");
  for (int i = 0; i < kRecords; ++i) {
    writer->WriteApiCall(testing::LaunchCall(i, api, kernel));
    writer->WriteKernel(testing::KernelRun(i, kernel));
  }
  switch (death) {
    case Death::kSigkill:
      kill(getpid(), SIGKILL);
      break;
    case Death::kSigsegv:
      std::signal(SIGSEGV, SIG_DFL);
      raise(SIGSEGV);
      break;
    case Death::kAbort:
      std::abort();
    case Death::kUnderscoreExit:
      _exit(7);  // what os._exit does: no atexit handlers, no stdio flush
  }
  _exit(101);
}

class TraceCrashTest : public ::testing::TestWithParam<Death> {};

TEST_P(TraceCrashTest, EveryRecordWrittenBeforeDeathIsRead) {
  const std::string path = testing::TempDir() + "/crash.gctrace";
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) WriteThenDie(path, GetParam());
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  switch (GetParam()) {
    case Death::kSigkill:
      EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
      break;
    case Death::kSigsegv:
      EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV) << status;
      break;
    case Death::kAbort:
      EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT) << status;
      break;
    case Death::kUnderscoreExit:
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 7) << status;
      break;
  }

  absl::StatusOr<Trace> trace = ReadTrace(path);
  ASSERT_TRUE(trace.ok()) << trace.status();
  EXPECT_THAT(trace->read_warnings, IsEmpty());
  EXPECT_EQ(trace->process.pid, static_cast<uint32_t>(child));
  ASSERT_EQ(trace->api_calls.size(), static_cast<size_t>(kRecords));
  ASSERT_EQ(trace->kernels.size(), static_cast<size_t>(kRecords));
  for (int i = 0; i < kRecords; ++i) {
    EXPECT_EQ(trace->api_calls[i].correlation_id, 1000u + i);
    EXPECT_EQ(trace->kernels[i].correlation_id, 1000u + i);
  }
  EXPECT_EQ(trace->String(trace->Shape(trace->kernels.back()).name), "gemm");
}

INSTANTIATE_TEST_SUITE_P(Deaths, TraceCrashTest,
                         ::testing::Values(Death::kSigkill, Death::kSigsegv, Death::kAbort, Death::kUnderscoreExit),
                         [](const ::testing::TestParamInfo<Death>& info) {
                           switch (info.param) {
                             case Death::kSigkill:
                               return "Sigkill";
                             case Death::kSigsegv:
                               return "Sigsegv";
                             case Death::kAbort:
                               return "Abort";
                             case Death::kUnderscoreExit:
                               return "UnderscoreExit";
                           }
                           return "Unknown";
                         });

// Killed from outside at an arbitrary moment, maybe mid-record: what was committed reads back as an unbroken prefix
// (a torn record was never committed, so it is no damage either).
TEST(TraceCrashTest, KilledMidWriteLeavesACleanPrefix) {
  const std::string path = testing::TempDir() + "/midwrite.gctrace";
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    alarm(20);
    TraceWriter::Options options;
    options.chunk_bytes = 4096;  // many chunk changes to be killed in
    absl::StatusOr<std::unique_ptr<TraceWriter>> writer = TraceWriter::Create(path, testing::SampleProcess(), options);
    if (!writer.ok()) _exit(100);
    const StringId api = (*writer)->InternString("cudaLaunchKernel");
    for (uint64_t i = 0;; ++i) {
      (*writer)->WriteApiCall(testing::LaunchCall(i, api, (*writer)->InternString("k" + std::to_string(i % 300))));
      if (i == 1000 && write(ready[1], "r", 1) != 1) _exit(102);
    }
  }
  char byte;
  ASSERT_EQ(read(ready[0], &byte, 1), 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  kill(child, SIGKILL);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  close(ready[0]);
  close(ready[1]);

  absl::StatusOr<Trace> trace = ReadTrace(path);
  ASSERT_TRUE(trace.ok()) << trace.status();
  EXPECT_THAT(trace->read_warnings, IsEmpty());
  ASSERT_GT(trace->api_calls.size(), 1000u);
  for (size_t i = 0; i < trace->api_calls.size(); ++i) {
    ASSERT_EQ(trace->api_calls[i].correlation_id, 1000 + i);
    ASSERT_EQ(trace->String(trace->Detail(trace->api_calls[i]).kernel_name), "k" + std::to_string(i % 300));
  }
}

// Parent and child both write after fork(): each file holds exactly its own process's records, and the child's
// records can use strings interned before the fork.
TEST(TraceForkTest, ParentAndChildFilesHoldOnlyTheirOwnRecords) {
  const std::string dir = testing::TempDir();
  absl::StatusOr<std::unique_ptr<TraceWriter>> created =
      TraceWriter::Create(dir + "/parent.gctrace", testing::SampleProcess());
  ASSERT_TRUE(created.ok());
  TraceWriter& writer = **created;
  const StringId api = writer.InternString("cudaLaunchKernel");
  const StringId before = writer.InternString("before_fork");
  const BacktraceId bt = writer.AddBacktrace({api, before});
  for (int i = 0; i < 100; ++i) writer.WriteKernel(testing::KernelRun(i, before));

  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    alarm(20);
    ProcessInfo info = testing::SampleProcess();
    info.command_line = {"child"};
    if (!writer.ReopenForChild(dir + "/child.gctrace", info).ok()) _exit(100);
    const StringId in_child = writer.InternString("in_child");
    for (int i = 0; i < 50; ++i) {
      ApiCallRecord c = testing::LaunchCall(5000 + i, api, i % 2 == 0 ? before : in_child);
      c.backtrace = bt;
      writer.WriteApiCall(c);
    }
    _exit(writer.records_dropped() == 0 ? 0 : 103);
  }
  for (int i = 100; i < 130; ++i) writer.WriteKernel(testing::KernelRun(i, writer.InternString("after_fork")));
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;

  absl::StatusOr<Trace> parent = ReadTrace(dir + "/parent.gctrace");
  ASSERT_TRUE(parent.ok());
  EXPECT_THAT(parent->read_warnings, IsEmpty());
  EXPECT_TRUE(parent->api_calls.empty());
  ASSERT_EQ(parent->kernels.size(), 130u);
  EXPECT_EQ(parent->String(parent->Shape(parent->kernels.back()).name), "after_fork");

  absl::StatusOr<Trace> child_trace = ReadTrace(dir + "/child.gctrace");
  ASSERT_TRUE(child_trace.ok());
  EXPECT_THAT(child_trace->read_warnings, IsEmpty());
  EXPECT_EQ(child_trace->process.pid, static_cast<uint32_t>(child));
  EXPECT_EQ(child_trace->process.command_line, std::vector<std::string>{"child"});
  EXPECT_TRUE(child_trace->kernels.empty());
  ASSERT_EQ(child_trace->api_calls.size(), 50u);
  EXPECT_EQ(child_trace->String(child_trace->Detail(child_trace->api_calls[0]).kernel_name), "before_fork");
  EXPECT_EQ(child_trace->String(child_trace->Detail(child_trace->api_calls[1]).kernel_name), "in_child");
  ASSERT_NE(child_trace->FindBacktrace(bt), nullptr);
  EXPECT_EQ(child_trace->FindBacktrace(bt)->frames, (std::vector<StringId>{api, before}));
}

// A child that never reopens drops its records instead of writing into the parent's file; and a fork while other
// threads are interning and writing never leaves the child stuck on a lock they held.
TEST(TraceForkTest, ForkDuringConcurrentWritesNeitherCorruptsNorDeadlocks) {
  const std::string dir = testing::TempDir();
  TraceWriter::Options options;
  options.chunk_bytes = 4096;
  absl::StatusOr<std::unique_ptr<TraceWriter>> created =
      TraceWriter::Create(dir + "/parent.gctrace", testing::SampleProcess(), options);
  ASSERT_TRUE(created.ok());
  TraceWriter& writer = **created;
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&, t] {
      for (uint64_t i = 0; !stop.load(); ++i) {
        ApiCallRecord c = testing::LaunchCall(i, writer.InternString("api" + std::to_string(i % 7)),
                                              writer.InternString("k" + std::to_string(i % 500 + 1000 * t)));
        c.thread_id = static_cast<uint32_t>(t);
        writer.WriteApiCall(c);
      }
    });
  }
  for (int round = 0; round < 20; ++round) {
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      alarm(10);
      writer.WriteKernel(testing::KernelRun(0, writer.InternString("not_reopened")));  // dropped
      if (writer.records_dropped() == 0) _exit(104);
      if (!writer.ReopenForChild(dir + "/child" + std::to_string(round) + ".gctrace", testing::SampleProcess()).ok()) {
        _exit(100);
      }
      writer.WriteKernel(testing::KernelRun(1, writer.InternString("child_kernel")));
      _exit(0);
    }
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "round " << round << " status " << status;
    absl::StatusOr<Trace> child_trace = ReadTrace(dir + "/child" + std::to_string(round) + ".gctrace");
    ASSERT_TRUE(child_trace.ok());
    EXPECT_THAT(child_trace->read_warnings, IsEmpty());
    ASSERT_EQ(child_trace->kernels.size(), 1u);
    EXPECT_EQ(child_trace->String(child_trace->Shape(child_trace->kernels[0]).name), "child_kernel");
    EXPECT_TRUE(child_trace->api_calls.empty());
  }
  stop.store(true);
  for (std::thread& t : threads) t.join();

  absl::StatusOr<Trace> parent = ReadTrace(dir + "/parent.gctrace");
  ASSERT_TRUE(parent.ok());
  EXPECT_THAT(parent->read_warnings, IsEmpty());
  EXPECT_TRUE(parent->kernels.empty());
  // Everything the parent wrote is there: its process record, its strings and its API calls.
  EXPECT_EQ(parent->api_calls.size(), writer.records_written() - parent->strings.size());
  for (const ApiCall& c : parent->api_calls) ASSERT_FALSE(parent->String(parent->Detail(c).kernel_name).empty());
}

}  // namespace
}  // namespace graphcheck::trace
