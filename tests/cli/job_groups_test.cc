// graphcheck analyze groups traces into jobs by what their processes recorded. Two two-rank torchrun runs that both
// used MASTER_ADDR:MASTER_PORT 127.0.0.1:29500, one after the other, are two jobs (refused as one), though their ranks
// name the same rendezvous; one run's ranks and their agent are one job, ranks that started a minute apart included.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cli/analyze_command.h"
#include "trace/trace_writer.h"

namespace graphcheck {
namespace {

using ::testing::HasSubstr;

constexpr uint64_t kSecond = 1'000'000'000;
constexpr uint64_t kFirstRun = 1'795'800'409 * kSecond;  // CUPTI's clock reads the wall clock

struct Process {
  std::string host;
  uint32_t pid = 0;
  uint32_t parent_pid = 0;
  int32_t rank = -1;  // -1: torchrun's agent
  uint64_t start_ns = 0;
  int seconds = 30;  // alive for, one NVTX step a second
};

// The trace of one process of a torchrun job, as the recorder writes it: RANK, WORLD_SIZE and the
// rendezvous torchrun sets, and the process's steps. No end is written (as for a process killed), so the last record
// says until when it ran.
std::string WriteTrace(const std::string& dir, const Process& p) {
  trace::ProcessInfo process;
  process.pid = p.pid;
  process.parent_pid = p.parent_pid;
  process.rank = p.rank;
  process.local_rank = p.rank;
  process.world_size = p.rank >= 0 ? 2 : -1;
  process.start_ns = p.start_ns;
  process.hostname = p.host;
  process.command_line = {"python3", "train.py"};
  const std::string path = absl::StrCat(dir, "/trace-", p.host, "-", p.pid, ".gctrace");
  absl::StatusOr<std::unique_ptr<trace::TraceWriter>> writer = trace::TraceWriter::Create(path, process);
  EXPECT_TRUE(writer.ok()) << writer.status();
  if (!writer.ok()) return path;
  trace::TraceWriter& w = **writer;
  Environment environment;
  environment.Set("MASTER_ADDR", "127.0.0.1");
  environment.Set("MASTER_PORT", "29500");
  w.WriteEnvironment(environment);
  const trace::StringId step = w.InternString("train_step");
  for (int s = 0; s < p.seconds; ++s) {
    const uint64_t t = p.start_ns + s * kSecond;
    w.WriteNvtx({trace::NvtxEvent::Kind::kPush, p.pid, t, 0, step, 0});
    w.WriteNvtx({trace::NvtxEvent::Kind::kPop, p.pid, t + kSecond / 2, 0, 0, 0});
  }
  return path;
}

// One torchrun run on one host from `start`: its agent (pid `agent`, started by a shell) and ranks 0 and 1, which it
// started a second later.
void WriteRun(const std::string& dir, uint32_t agent, uint64_t start) {
  WriteTrace(dir, {"node0", agent, agent - 1, -1, start, 33});
  WriteTrace(dir, {"node0", agent + 1, agent, 0, start + kSecond});
  WriteTrace(dir, {"node0", agent + 2, agent, 1, start + kSecond});
}

absl::Status Analyze(const std::vector<std::string>& traces) {
  Report report;
  return AnalyzeTraceFilesInto(traces, nullptr, IterationFlags{}, CheckSettings{}, &report, TraceOrigin::kUserPaths);
}

std::string NewDir(const std::string& name) {
  const std::string dir = testing::TempDir() + "/job_groups_" + name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

TEST(JobGroupsTest, TwoRunsOnOneRendezvousOneAfterTheOtherAreTwoJobs) {
  const std::string dir = NewDir("two_runs");
  WriteRun(dir, 100, kFirstRun);
  WriteRun(dir, 200, kFirstRun + 120 * kSecond);  // after the first run's 33 s
  const absl::Status status = Analyze({dir});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("the 6 traces are of 2 separate jobs"));
  // The ranks alone, without the agents that started them.
  const std::string ranks = NewDir("two_runs_ranks");
  for (uint32_t agent : {100, 200}) {
    for (uint32_t pid : {agent + 1, agent + 2}) {
      std::filesystem::rename(absl::StrCat(dir, "/trace-node0-", pid, ".gctrace"),
                              absl::StrCat(ranks, "/trace-node0-", pid, ".gctrace"));
    }
  }
  EXPECT_THAT(std::string(Analyze({ranks}).message()), HasSubstr("the 4 traces are of 2 separate jobs"));
}

TEST(JobGroupsTest, OneRunsRanksAndAgentsAreOneJob) {
  const std::string dir = NewDir("one_run");
  WriteRun(dir, 100, kFirstRun);
  EXPECT_TRUE(Analyze({dir}).ok());
  // Two hosts, an agent and a rank on each, that only the rendezvous ties: rank 1 started 20 s after rank 0, while
  // rank 0 still ran.
  const std::string nodes = NewDir("one_run_two_hosts");
  WriteTrace(nodes, {"node0", 100, 99, -1, kFirstRun, 33});
  WriteTrace(nodes, {"node0", 101, 100, 0, kFirstRun + kSecond});
  WriteTrace(nodes, {"node1", 100, 99, -1, kFirstRun + 20 * kSecond, 33});
  WriteTrace(nodes, {"node1", 101, 100, 1, kFirstRun + 21 * kSecond});
  EXPECT_TRUE(Analyze({nodes}).ok());
}

}  // namespace
}  // namespace graphcheck
