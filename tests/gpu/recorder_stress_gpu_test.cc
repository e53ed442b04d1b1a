// Stress and fault tests of the recorder's accounting (label gpu): every record a case should produce is either in the
// trace or counted as lost in it; nothing is lost uncounted. Each case prints a table row (RESULT case expected
// recorded lost) for bench/results/. Without a GPU every test skips with a message.
#include <sys/mount.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "tests/gpu/gpu_test_env.h"
#include "trace/trace_reader.h"

namespace graphcheck {
namespace {

using gpu_test::BuildDir;
using gpu_test::HasGpu;

struct CaseRun {
  int status = -1;
  std::string output;                    // the program's stdout
  std::string report;                    // graphcheck's text report
  std::map<std::string, long> expected;  // "expected KIND N" lines
  std::vector<trace::Trace> traces;
};

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

CaseRun RunCase(const std::string& name, const std::string& args, const std::string& flags, const std::string& dir) {
  const std::string base = absl::StrCat(::testing::TempDir(), "/stress-", name, "-", getpid());
  const std::string cmd =
      absl::StrCat(BuildDir(), "/graphcheck run ", flags, " --trace-dir ", dir, " -o ", base,
                   ".txt --fail-on never -- ", BuildDir(), "/tests/gpu/gpu_stress_cases ", args, " >", base, ".out");
  CaseRun run;
  run.status = WEXITSTATUS(std::system(cmd.c_str()));
  run.output = Slurp(base + ".out");
  run.report = Slurp(base + ".txt");
  for (absl::string_view line : absl::StrSplit(run.output, '\n')) {
    std::vector<std::string> words = absl::StrSplit(line, ' ');
    long n = 0;
    if (words.size() == 3 && words[0] == "expected" && absl::SimpleAtoi(words[2], &n)) run.expected[words[1]] += n;
  }
  if (std::filesystem::exists(dir)) {
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      absl::StatusOr<trace::Trace> trace = trace::ReadTrace(entry.path().string());
      EXPECT_TRUE(trace.ok()) << trace.status();
      if (trace.ok()) run.traces.push_back(*std::move(trace));
    }
  }
  return run;
}

uint64_t Lost(const trace::Trace& trace, trace::LossKind kind) {
  uint64_t n = 0;
  for (const trace::LossCount& loss : trace.integrity.losses) n += loss.kind == kind ? loss.count : 0;
  return n;
}

uint64_t AllLost(const trace::Trace& trace) {
  uint64_t n = 0;
  for (const trace::LossCount& loss : trace.integrity.losses) n += loss.count;
  return n;
}

size_t Count(const trace::Trace& trace, trace::ApiKind kind, bool captured) {
  return std::count_if(trace.api_calls.begin(), trace.api_calls.end(), [&](const trace::ApiCall& c) {
    return c.kind == kind && (c.capture_status != trace::CaptureStatus::kNone) == captured;
  });
}

void Row(const std::string& name, long expected, uint64_t recorded, uint64_t lost) {
  std::printf("RESULT | %s | %ld | %llu | %llu |\n", name.c_str(), expected, static_cast<unsigned long long>(recorded),
              static_cast<unsigned long long>(lost));
}

class RecorderStressGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HasGpu()) GTEST_SKIP() << "no GPU";
  }
  std::string Dir(const std::string& name) {
    const std::string dir = absl::StrCat(::testing::TempDir(), "/stress-", name, "-", getpid(), "-traces");
    std::filesystem::remove_all(dir);
    return dir;
  }
};

TEST_F(RecorderStressGpuTest, ThirtyTwoThreadsLaunchWhileOneCapturesThreadLocal) {
  const CaseRun run = RunCase("threads", "threads 32", "--launches all", Dir("threads"));
  ASSERT_EQ(run.traces.size(), 1u) << run.report;
  const trace::Trace& t = run.traces[0];
  const size_t captured = Count(t, trace::ApiKind::kKernelLaunch, true);
  const size_t eager = Count(t, trace::ApiKind::kKernelLaunch, false);
  Row("32 threads, thread-local capture: captured launches", run.expected.at("captured_launches"), captured,
      Lost(t, trace::LossKind::kLaunchExitLost));
  Row("32 threads, thread-local capture: eager launches", run.expected.at("eager_launches"), eager,
      Lost(t, trace::LossKind::kLaunchExitLost) + Lost(t, trace::LossKind::kWriterDropped));
  EXPECT_EQ(captured, static_cast<size_t>(run.expected.at("captured_launches")));
  EXPECT_GE(eager + AllLost(t), static_cast<size_t>(run.expected.at("eager_launches")));
  EXPECT_EQ(t.integrity.end, trace::TraceEnd::kClean);
}

TEST_F(RecorderStressGpuTest, TenMillionLaunchesWithEveryLaunchRecorded) {
  const CaseRun run = RunCase("launches", "launches 10000000", "--launches all", Dir("launches"));
  ASSERT_EQ(run.traces.size(), 1u) << run.report;
  const trace::Trace& t = run.traces[0];
  const size_t launches = Count(t, trace::ApiKind::kKernelLaunch, false);
  Row("10M launches, --launches all: launch calls", run.expected.at("launches"), launches,
      Lost(t, trace::LossKind::kWriterDropped) + Lost(t, trace::LossKind::kLaunchExitLost));
  Row("10M launches, --launches all: kernel records", run.expected.at("kernels"), t.kernels.size(),
      Lost(t, trace::LossKind::kActivityDropped) + Lost(t, trace::LossKind::kActivityBufferFailed));
  EXPECT_GE(launches + AllLost(t), static_cast<size_t>(run.expected.at("launches")));
  EXPECT_GE(t.kernels.size() + AllLost(t), static_cast<size_t>(run.expected.at("kernels")));
  if (AllLost(t) > 0) EXPECT_NE(run.report.find("trace-incomplete"), std::string::npos) << run.report;
}

TEST_F(RecorderStressGpuTest, TraceDirectoryOnAOneMebibyteTmpfs) {
  const std::string dir = Dir("tmpfs");
  std::filesystem::create_directories(dir);
  if (mount("tmpfs", dir.c_str(), "tmpfs", 0, "size=1m") != 0) GTEST_SKIP() << "cannot mount a tmpfs (not root?)";
  const CaseRun run = RunCase("tmpfs", "launches 200000", "--launches all", dir);
  ASSERT_EQ(run.traces.size(), 1u) << run.report;
  const trace::Trace& t = run.traces[0];
  const size_t launches = Count(t, trace::ApiKind::kKernelLaunch, false);
  Row("200k launches, trace dir on a 1 MiB tmpfs: launch calls", run.expected.at("launches"), launches,
      Lost(t, trace::LossKind::kWriterDropped));
  EXPECT_EQ(run.output.find("failed"), std::string::npos);  // the program ran to its end
  EXPECT_GT(Lost(t, trace::LossKind::kWriterDropped), 0u);
  EXPECT_GE(launches + AllLost(t), static_cast<size_t>(run.expected.at("launches")));
  EXPECT_NE(run.report.find("trace-incomplete"), std::string::npos) << run.report;
  umount(dir.c_str());
}

TEST_F(RecorderStressGpuTest, ForkedWorkersEachGetACompleteTrace) {
  const CaseRun run = RunCase("fork", "fork 4", "--launches all", Dir("fork"));
  EXPECT_EQ(static_cast<long>(run.traces.size()), run.expected.at("processes")) << run.report;
  std::set<uint32_t> pids;
  for (const trace::Trace& t : run.traces) pids.insert(t.process.pid);
  for (const trace::Trace& t : run.traces) {
    const size_t launches = Count(t, trace::ApiKind::kKernelLaunch, false);
    const bool worker = pids.count(t.process.parent_pid) != 0;
    Row(absl::StrCat("fork: ", worker ? "worker" : "parent", " ", t.process.pid, " launch calls"), 1000, launches,
        AllLost(t));
    EXPECT_GE(launches + AllLost(t), 1000u);
    // Workers leave with _Exit, as forked workers do (os._exit): no exit handler runs, so their traces have no clean
    // end, and say so.
    EXPECT_EQ(t.integrity.end, worker ? trace::TraceEnd::kRunning : trace::TraceEnd::kClean);
  }
}

TEST_F(RecorderStressGpuTest, AProgramThatSubscribesItsOwnCuptiClientAfterGraphcheck) {
  const CaseRun run = RunCase("own-cupti", "own-cupti", "--launches all", Dir("own-cupti"));
  ASSERT_EQ(run.traces.size(), 1u) << run.report;
  const trace::Trace& t = run.traces[0];
  const size_t launches = Count(t, trace::ApiKind::kKernelLaunch, false);
  Row("own CUPTI client after graphcheck: launch calls", run.expected.at("launches"), launches, AllLost(t));
  EXPECT_TRUE(t.recorder.subscribed);
  EXPECT_GE(launches + AllLost(t), static_cast<size_t>(run.expected.at("launches")));
  EXPECT_EQ(t.integrity.end, trace::TraceEnd::kClean);
}

}  // namespace
}  // namespace graphcheck
