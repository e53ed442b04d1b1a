// Jobs built in memory for the collective ledger's tests: one RankProgram per rank appends captures, replays, eager
// collectives and waits in time order; a Job is their traces, analyzed as `graphcheck analyze` does.
#ifndef GRAPHCHECK_TESTS_CHECKS_JOB_RANK_PROGRAM_H_
#define GRAPHCHECK_TESTS_CHECKS_JOB_RANK_PROGRAM_H_

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "analysis/job_summary.h"
#include "checks/analyze.h"
#include "cli/catalog.h"
#include "tests/checks/trace/trace_builder.h"

namespace graphcheck::testing_trace {

inline constexpr uint32_t kMain = 1;
inline constexpr uint32_t kAutograd = 2;
inline constexpr uint64_t kStream7 = 7;

// One rank's program: captures, replays and eager collectives appended in time order.
class RankProgram {
 public:
  RankProgram(int rank, int world_size) {
    b_.trace().process.rank = rank;
    b_.trace().process.world_size = world_size;
    b_.trace().process.pid = 1000 + static_cast<uint32_t>(rank);
    // As on two H200s: DDP's reducer thread is named after the rank's device, so the ranks' names differ.
    b_.trace().thread_names.push_back({kAutograd, b_.Intern("pt_autograd_" + std::to_string(rank))});
  }

  // A capture at `line` of the program's setup() that issues `collectives` (NCCL calls from the autograd thread, as
  // DDP's reducer makes them) and makes CUDA graph `graph_id`.
  void Capture(uint64_t graph_id, uint32_t line, const std::vector<std::string>& collectives) {
    std::vector<std::pair<std::string, uint64_t>> calls;
    for (const std::string& name : collectives) calls.emplace_back(name, communicator_);
    CaptureCalls(graph_id, line, calls);
  }
  // The same with each call's communicator.
  void CaptureCalls(uint64_t graph_id, uint32_t line, const std::vector<std::pair<std::string, uint64_t>>& calls) {
    const uint64_t capture_id = ++captures_;
    b_.Probe(Tick(), kMain, trace::ProbeEventKind::kCaptureBegin, PythonGraph(graph_id), trace::ProbeOrigin::kUser);
    b_.Begin(Tick(), kMain, kStream7).python_stack = b_.PythonStack({{"/job/train.py", line, "setup"}});
    TraceBuilder::In(b_.Launch(Tick(), kMain, kStream7, "gemm"), capture_id);
    for (const auto& [name, communicator] : calls) {
      b_.Push(Tick(), kAutograd, name, "NCCL").communicator = communicator;
      b_.Pop(Tick(), kAutograd, "NCCL");
    }
    b_.End(Tick(), kMain, kStream7, capture_id, 0, 1 + static_cast<uint32_t>(calls.size())).graph_id = graph_id;
    b_.Probe(Tick(), kMain, trace::ProbeEventKind::kCaptureEnd, PythonGraph(graph_id));
  }
  // A replay of `graph_id` from the program's `function` at `line` (0: no Python stack, as without the recorder's
  // launch stacks).
  void Replay(uint64_t graph_id, uint32_t line, const std::string& function = "step") {
    ApiCall& call = b_.Replay(Tick(), kMain, kStream7, graph_id, 100, 1000);
    if (line != 0) call.python_stack = b_.PythonStack({{"/job/train.py", line, function}});
  }
  // An eager NCCL call; at `line` when the probe announced it as a wait (--hang-timeout), else from `thread`.
  void Eager(const std::string& name, uint32_t line = 0, uint32_t thread = kMain) {
    const uint64_t begin = Tick();
    if (line != 0) {
      b_.Probe(begin, thread, trace::ProbeEventKind::kWaitBegin).stack =
          b_.PythonStack({{"/job/train.py", line, "log"}});
    }
    b_.Push(Tick(), thread, name, "NCCL").communicator = communicator_;
    b_.Pop(Tick(), thread, "NCCL");
    if (line != 0) b_.Probe(Tick(), thread, trace::ProbeEventKind::kWaitEnd);
  }
  // The communicator the NCCL calls that follow name in their NVTX payload (NCCL 2.19+); 0, the start: none.
  void UseCommunicator(uint64_t communicator) { communicator_ = communicator; }
  // The program waits in torch.distributed.destroy_process_group at `line` with CUDA graph `graph_id` alive (the
  // probe's events), and graphcheck ends it.
  void TeardownWithLiveGraph(uint64_t graph_id, uint32_t line) {
    b_.Probe(Tick(), kMain, trace::ProbeEventKind::kGraphAlive, PythonGraph(graph_id));
    b_.Probe(Tick(), kMain, trace::ProbeEventKind::kWaitBegin).text =
        b_.Intern("torch.distributed.destroy_process_group");
    Hang(line, "torch.distributed.destroy_process_group");
  }
  // graphcheck ended the process in `call` at `line`.
  void Hang(uint32_t line, const std::string& call = "cudaStreamSynchronize") {
    trace::Hang& hang = b_.trace().hangs.emplace_back();
    hang.thread_id = kMain;
    hang.since_ns = Tick();
    hang.time_ns = hang.since_ns + 31'000'000'000ull;
    hang.timeout_ns = 30'000'000'000ull;
    hang.call = b_.Intern(call);
    hang.stack = b_.PythonStack({{"/job/train.py", line, "main"}});
    b_.trace().integrity.end = trace::TraceEnd::kHung;
  }
  // The program dies of an exception nothing caught (the probe's event).
  void Die() {
    b_.Exception(Tick(), kMain, trace::ProbeEventKind::kUncaughtException, 0, "RuntimeError", "data ran out",
                 b_.PythonStack({{"/job/train.py", 99, "main"}}));
  }
  // The process was killed: its trace has no end (SIGKILL, or a launcher ending the job).
  void Killed() { b_.trace().integrity.end = trace::TraceEnd::kRunning; }
  // The trace writer could not place some records: the ledger may miss entries.
  void LoseRecords() { b_.trace().integrity.losses.push_back({trace::LossKind::kWriterDropped, 10, 0}); }
  trace::Trace Build() { return b_.Build(); }

 private:
  uint64_t Tick() { return now_ += 10'000; }
  // The Python object id the probe reports for CUDA graph `graph_id`.
  static uint64_t PythonGraph(uint64_t graph_id) { return 0x7f0000 + graph_id; }
  TraceBuilder b_;
  uint64_t now_ = 0;
  uint64_t captures_ = 0;
  uint64_t communicator_ = 0;
};

using Job = std::vector<trace::Trace>;

inline Job BuildJob(int world_size, const std::function<void(int rank, RankProgram&)>& program) {
  Job job;
  for (int rank = 0; rank < world_size; ++rank) {
    RankProgram p(rank, world_size);
    program(rank, p);
    job.push_back(p.Build());
  }
  return job;
}

inline checks::AnalysisResult Analyze(const Job& job, const std::string& selection) {
  std::vector<const trace::Trace*> traces;
  for (const trace::Trace& t : job) traces.push_back(&t);
  return checks::AnalyzeTraces(traces, nullptr, BuiltinChecks(), *CheckSelection::Parse(selection), CheckOptions());
}

inline std::vector<Finding> Divergences(const Job& job) { return Analyze(job, "rank-divergent-collectives").findings; }

inline analysis::ProcessSummary Summary(const trace::Trace& trace) {
  return analysis::SummarizeProcess(analysis::TraceAnalysis(trace));
}

// The job: both ranks capture a step whose backward all-reduces four buckets, and replay it 40 times at

}  // namespace graphcheck::testing_trace

#endif  // GRAPHCHECK_TESTS_CHECKS_JOB_RANK_PROGRAM_H_
