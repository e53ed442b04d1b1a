// The collective ledger and its comparison across ranks (rank-divergent-collectives, and what `hang` says of it), on
// jobs built in memory: a rank that replays its all-reduce graph once more every 10 steps to log a loss, ranks that
// order a replay and an eager all-reduce differently, eager collectives that part only where the job hung, clean twins,
// and synthetic jobs of 8 and 64 ranks.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "analyzers/analyze.h"
#include "analyzers/job_summary.h"
#include "analyzers/ledger_comparison.h"
#include "cli/catalog.h"
#include "tests/analyzers/trace_builder.h"

namespace graphcheck::testing_trace {
namespace {

using ::testing::AllOf;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

constexpr uint32_t kMain = 1;
constexpr uint32_t kAutograd = 2;
constexpr uint64_t kStream7 = 7;

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
    const uint64_t capture_id = ++captures_;
    b_.Probe(Tick(), kMain, trace::ProbeEventKind::kCaptureBegin, PythonGraph(graph_id), trace::ProbeOrigin::kUser);
    b_.Begin(Tick(), kMain, kStream7).python_stack = b_.PythonStack({{"/job/train.py", line, "setup"}});
    TraceBuilder::In(b_.Launch(Tick(), kMain, kStream7, "gemm"), capture_id);
    for (const std::string& name : collectives) {
      b_.Push(Tick(), kAutograd, name, "NCCL");
      b_.Pop(Tick(), kAutograd, "NCCL");
    }
    b_.End(Tick(), kMain, kStream7, capture_id, 0, 1 + static_cast<uint32_t>(collectives.size())).graph_id = graph_id;
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
    b_.Push(Tick(), thread, name, "NCCL");
    b_.Pop(Tick(), thread, "NCCL");
    if (line != 0) b_.Probe(Tick(), thread, trace::ProbeEventKind::kWaitEnd);
  }
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
};

using Job = std::vector<trace::Trace>;

Job BuildJob(int world_size, const std::function<void(int rank, RankProgram&)>& program) {
  Job job;
  for (int rank = 0; rank < world_size; ++rank) {
    RankProgram p(rank, world_size);
    program(rank, p);
    job.push_back(p.Build());
  }
  return job;
}

analyzers::AnalysisResult Analyze(const Job& job, const std::string& checks) {
  std::vector<const trace::Trace*> traces;
  for (const trace::Trace& t : job) traces.push_back(&t);
  return analyzers::AnalyzeTraces(traces, nullptr, BuiltinChecks(), *CheckSelection::Parse(checks), CheckOptions());
}

std::vector<Finding> Divergences(const Job& job) { return Analyze(job, "rank-divergent-collectives").findings; }

analyzers::ProcessSummary Summary(const trace::Trace& trace) {
  return analyzers::SummarizeProcess(analyzers::TraceAnalysis(trace));
}

// The job: both ranks capture a step whose backward all-reduces four buckets, and replay it 40 times at
// train.py:48; rank 0 also replays it after every 10th step at train.py:52 "to log a fresh loss".
Job ExtraReplayOnRankZero() {
  return BuildJob(2, [](int rank, RankProgram& p) {
    p.Capture(12, 30, {"ncclAllReduce", "ncclAllReduce", "ncclAllReduce", "ncclAllReduce"});
    for (int step = 1; step <= 40; ++step) {
      p.Replay(12, 48);
      if (rank == 0 && step % 10 == 0) p.Replay(12, 52, "log");
    }
  });
}

TEST(CollectiveLedgerTest, KeepsReplaysOfCollectiveGraphsAndEagerCollectivesInOrder) {
  RankProgram p(0, 2);
  p.Capture(12, 30, {"ncclAllReduce", "ncclAllReduce"});
  p.Capture(13, 31, {});  // no NCCL work: its replays are not in the ledger
  p.Replay(12, 48);
  p.Replay(12, 48);
  p.Replay(13, 49);
  p.Eager("ncclAllReduce", 60);
  p.Eager("ncclSend");                     // point-to-point: left out
  p.Eager("ncclBroadcast", 0, kAutograd);  // named by its thread
  p.Replay(12, 0);                         // no Python stack
  const analyzers::ProcessSummary summary = Summary(p.Build());
  const analyzers::CollectiveLedger& ledger = summary.ledger;
  ASSERT_THAT(ledger.graphs, SizeIs(1));
  EXPECT_EQ(ledger.graphs[0].capture, 1u);
  EXPECT_EQ(ledger.graphs[0].replays, 3u);
  EXPECT_EQ(ledger.GraphText(0), "the graph captured at /job/train.py:30 in setup (ncclAllReduce x2)");
  ASSERT_THAT(ledger.entries, SizeIs(4));
  EXPECT_EQ(ledger.entries[0].count, 2u);
  EXPECT_EQ(ledger.SiteText(ledger.entries[0].site), " at /job/train.py:48 in step");
  EXPECT_EQ(ledger.Describe(ledger.entries[1]), "an eager ncclAllReduce");
  EXPECT_EQ(ledger.SiteText(ledger.entries[1].site), " at /job/train.py:60 in log");
  EXPECT_EQ(ledger.Describe(ledger.entries[2]), "an eager ncclBroadcast");
  EXPECT_EQ(ledger.SiteText(ledger.entries[2].site), " on thread pt_autograd_0");
  EXPECT_EQ(ledger.entries[3].site, 0u);
  EXPECT_EQ(ledger.replays, 3u);
  EXPECT_EQ(ledger.eager, 2u);
  EXPECT_FALSE(ledger.truncated);
}

TEST(CollectiveLedgerTest, KeepsABoundedNumberOfRunsAndCountsTheRest) {
  RankProgram p(0, 2);
  p.Capture(12, 30, {"ncclAllReduce"});
  for (size_t step = 0; step < analyzers::kMaxLedgerEntries; ++step) {
    p.Replay(12, 48);
    p.Eager("ncclAllReduce");
  }
  const analyzers::CollectiveLedger ledger = Summary(p.Build()).ledger;
  EXPECT_THAT(ledger.entries, SizeIs(analyzers::kMaxLedgerEntries));
  EXPECT_TRUE(ledger.truncated);
  EXPECT_EQ(ledger.replays, analyzers::kMaxLedgerEntries);
  EXPECT_EQ(ledger.eager, analyzers::kMaxLedgerEntries);
}

TEST(RankDivergentCollectivesTest, NamesTheExtraReplayAtBothRanksLinesWithTheCounts) {
  const std::vector<Finding> findings = Divergences(ExtraReplayOnRankZero());
  ASSERT_THAT(findings, SizeIs(1));
  const Finding& f = findings[0];
  EXPECT_EQ(f.check_id, "rank-divergent-collectives");
  EXPECT_EQ(f.severity, Severity::kError);
  EXPECT_EQ(f.where.ranks, (std::vector<int32_t>{0, 1}));  // two ranks, no majority: both
  // NCCL pairs rank 0's extra replay with rank 1's next step: the ledgers part only at the end, and the fork before
  // it is where the ranks went different ways.
  EXPECT_THAT(f.message, HasSubstr("went different ways at their 11th collective-bearing graph replay, the 11th replay "
                                   "of the graph captured at /job/train.py:30 in setup (ncclAllReduce x4): rank 1 made "
                                   "it at /job/train.py:48 in step, rank 0 at /job/train.py:52 in log"));
  EXPECT_THAT(f.message, HasSubstr("Their ledgers part at the 41st: rank 1 made no more (40 in all)"));
  // The line to fix is rank 0's extra replay, not the step both ranks run.
  ASSERT_NE(FirstUserFrame(f.where), nullptr);
  EXPECT_EQ(FirstUserFrame(f.where)->line, 52);
  EXPECT_THAT(f.evidence, Contains(HasSubstr("(ncclAllReduce x4) 40 time(s), rank 0 44")));
  EXPECT_THAT(f.fix, HasSubstr("the same number of times"));
}

TEST(RankDivergentCollectivesTest, WithoutLaunchLinesTheCountsStillNameIt) {
  const Job job = BuildJob(2, [](int rank, RankProgram& p) {
    p.Capture(12, 30, {"ncclAllReduce"});
    for (int step = 0; step < (rank == 0 ? 44 : 40); ++step) p.Replay(12, 0);
  });
  const std::vector<Finding> findings = Divergences(job);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].message, HasSubstr("part at their 41st collective-bearing graph replay"));
  EXPECT_THAT(findings[0].message, HasSubstr("made no more (40 in all)"));
  EXPECT_THAT(findings[0].evidence, Contains(HasSubstr("40 time(s), rank 0 44")));
}

// Both ranks replay the step graph and all-reduce the loss eagerly, but rank 1 all-reduces before its second replay:
// its eager all-reduce meets rank 0's replayed one.
TEST(RankDivergentCollectivesTest, NamesAReplayMetByAnEagerCollective) {
  const Job job = BuildJob(2, [](int rank, RankProgram& p) {
    p.Capture(12, 30, {"ncclAllReduce"});
    p.Replay(12, 48);
    if (rank == 1) p.Eager("ncclAllReduce", 60);
    p.Replay(12, 48);
    if (rank == 0) p.Eager("ncclAllReduce", 60);
  });
  const std::vector<Finding> findings = Divergences(job);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].message, HasSubstr("part at their 2nd collective-bearing replay or eager collective"));
  EXPECT_THAT(findings[0].message, HasSubstr("an eager ncclAllReduce at /job/train.py:60 in log (its 1st"));
  EXPECT_THAT(findings[0].message, HasSubstr("a replay of the graph captured at /job/train.py:30 in setup"));
  EXPECT_THAT(findings[0].fix, HasSubstr("same order"));
}

// Eager collectives alone may part by design (a collective on a subgroup only some ranks belong to): silent, unless
// the job hung, where they are the cause to name.
TEST(RankDivergentCollectivesTest, EagerCollectivesThatPartAreNamedOnlyWhenTheJobHung) {
  auto job_of = [](bool hung) {
    return BuildJob(2, [hung](int rank, RankProgram& p) {
      p.Eager("ncclAllReduce", 60);
      if (rank == 0) p.Eager("ncclBroadcast", 61);
      p.Eager("ncclAllReduce", 60);
      if (hung) p.Hang(70);
    });
  };
  EXPECT_THAT(Divergences(job_of(false)), IsEmpty());
  const std::vector<Finding> findings = Divergences(job_of(true));
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].message, HasSubstr("part at their 2nd eager collective"));
  EXPECT_THAT(findings[0].message, HasSubstr("an eager ncclBroadcast at /job/train.py:61 in log"));
}

TEST(RankDivergentCollectivesTest, CleanTwinsAreSilent) {
  // Every rank the same work (replays, DDP's eager all-reduces from the autograd thread, logging), at its own times.
  const Job job = BuildJob(4, [](int, RankProgram& p) {
    p.Capture(12, 30, {"ncclAllReduce", "ncclAllGather"});
    for (int step = 0; step < 20; ++step) {
      p.Replay(12, 48);
      if (step % 5 == 0) p.Eager("ncclAllReduce", 60);
    }
    p.Eager("ncclAllReduce", 0, kAutograd);
  });
  EXPECT_THAT(Divergences(job), IsEmpty());
}

// Ranks that capture the same graphs in another order but replay them in the same order pair up: the ledger compares
// what the graphs hold. Where one capture holds other collectives on each rank, rank-divergent-capture names it.
TEST(RankDivergentCollectivesTest, ComparesGraphsByTheirCollectivesNotTheirCaptureOrder) {
  const Job reordered = BuildJob(2, [](int rank, RankProgram& p) {
    const std::vector<std::string> gather = {"ncclAllGather"};
    const std::vector<std::string> reduce = {"ncclReduceScatter"};
    p.Capture(12, 30, rank == 0 ? gather : reduce);
    p.Capture(13, 31, rank == 0 ? reduce : gather);
    p.Replay(rank == 0 ? 12 : 13, 48);  // the all-gather graph, then the reduce-scatter graph, on both
    p.Replay(rank == 0 ? 13 : 12, 49);
  });
  EXPECT_THAT(Divergences(reordered), IsEmpty());

  const Job other_collectives = BuildJob(2, [](int rank, RankProgram& p) {
    p.Capture(12, 30, {rank == 0 ? "ncclAllGather" : "ncclAllReduce"});
    p.Replay(12, 48);
  });
  EXPECT_THAT(Divergences(other_collectives), IsEmpty());
  EXPECT_THAT(Analyze(other_collectives, "rank-divergent-capture").findings, SizeIs(1));
}

// A rank that stopped early leaves the others' collectives without partners: the parting says so, and the fix is
// what stopped it. A rank whose trace lost records is not compared.
TEST(RankDivergentCollectivesTest, ARankThatStoppedOrLostRecordsIsSaidSo) {
  const Job stopped = BuildJob(4, [](int rank, RankProgram& p) {
    p.Capture(12, 30, {"ncclAllReduce"});
    for (int step = 0; step < (rank == 2 ? 5 : 8); ++step) p.Replay(12, 48);
    if (rank == 2) p.Die();
  });
  const std::vector<Finding> findings = Divergences(stopped);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].where.ranks, (std::vector<int32_t>{2}));
  EXPECT_THAT(findings[0].message,
              HasSubstr("rank 2 made no more (5 in all): its process stopped on an uncaught exception"));
  EXPECT_THAT(findings[0].fix, HasSubstr("Rank 2's process stopped on an uncaught exception where the others went on"));

  const Job lossy = BuildJob(4, [](int rank, RankProgram& p) {
    p.Capture(12, 30, {"ncclAllReduce"});
    for (int step = 0; step < (rank == 2 ? 5 : 8); ++step) p.Replay(12, 48);
    if (rank == 2) p.LoseRecords();
  });
  EXPECT_THAT(Divergences(lossy), IsEmpty());
}

TEST(RankDivergentCollectivesTest, HangCitesTheParting) {
  Job job = BuildJob(2, [](int rank, RankProgram& p) {
    p.Capture(12, 30, {"ncclAllReduce"});
    for (int step = 1; step <= 12; ++step) {
      p.Replay(12, 48);
      if (rank == 0 && step % 10 == 0) p.Replay(12, 52, "log");
    }
    p.Hang(90);
  });
  const std::vector<Finding> findings = Analyze(job, "hang").findings;
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].message, HasSubstr("The ranks' collective ledgers part (rank-divergent-collectives): "));
  EXPECT_THAT(findings[0].message, HasSubstr("11th collective-bearing graph replay"));
  EXPECT_THAT(findings[0].fix, HasSubstr("Mend the parting rank-divergent-collectives names"));
}

TEST(RankDivergentCollectivesTest, HangSaysWhenTheLedgersAgree) {
  Job job = BuildJob(2, [](int rank, RankProgram& p) {
    p.Capture(12, 30, {"ncclAllReduce"});
    for (int step = 0; step < 5; ++step) p.Replay(12, 48);
    p.Hang(90);
  });
  const std::vector<Finding> findings = Analyze(job, "hang,rank-divergent-collectives").findings;
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].check_id, "hang");
  EXPECT_THAT(findings[0].message, HasSubstr("Yet the 2 ranks' collective ledgers agree: each made 5 "
                                             "collective-bearing graph replay(s) and 0 eager collective(s)"));
  EXPECT_THAT(findings[0].fix, HasSubstr("Look past the order of the collectives"));
}

// Seen on two H200s (ddp-graph-alive): every rank waits in destroy_process_group while its all-reduce graph is alive.
// The ledgers agree, and the hang keeps its own cause's fix.
TEST(RankDivergentCollectivesTest, AgreeingLedgersKeepTheFixOfAHangWithItsOwnCause) {
  Job job = BuildJob(2, [](int rank, RankProgram& p) {
    p.Capture(12, 30, {"ncclAllReduce"});
    for (int step = 0; step < 5; ++step) p.Replay(12, 48);
    p.TeardownWithLiveGraph(12, 90);
  });
  const std::vector<Finding> findings = Analyze(job, "hang,rank-divergent-collectives").findings;
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].message, HasSubstr("still alive at the wait"));
  EXPECT_THAT(findings[0].message, HasSubstr("Yet the 2 ranks' collective ledgers agree"));
  EXPECT_THAT(findings[0].fix, HasSubstr("before torch.distributed.destroy_process_group()"));
}

TEST(RankDivergentCollectivesTest, EightRanksNameTheOneThatParts) {
  const Job job = BuildJob(8, [](int rank, RankProgram& p) {
    p.Capture(12, 30, {"ncclAllReduce"});
    for (int step = 1; step <= 30; ++step) {
      p.Replay(12, 48);
      if (rank == 5 && step == 17) p.Replay(12, 52, "log");
      p.Eager("ncclAllReduce", 60);
    }
  });
  const std::vector<Finding> findings = Divergences(job);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].where.ranks, (std::vector<int32_t>{5}));
  // The eager all-reduces agree, so the parting is where rank 5's extra replay meets the others' all-reduce.
  EXPECT_THAT(findings[0].message, HasSubstr("rank 5 of 8 and ranks 0-4,6-7 part at their 34th collective-bearing "
                                             "replay or eager collective: rank 5's was a replay of the graph captured "
                                             "at /job/train.py:30 in setup (ncclAllReduce) at /job/train.py:52 in log "
                                             "(that graph's 18th replay), where ranks 0-4,6-7's was an eager "
                                             "ncclAllReduce at /job/train.py:60 in log (its 17th ncclAllReduce)"));
}

// The comparison on ledgers of 64 ranks, built directly: 3000 steps of a replay and an eager all-reduce each (6000
// entries, past what a ledger keeps). Rank 37 skips its replay at step 1000; rank 50 at step 2500, past the kept runs.
TEST(RankDivergentCollectivesTest, SixtyFourRanksFindThePartingWithinAndPastTheKeptRuns) {
  analyzers::JobSummary job;
  for (int rank = 0; rank < 64; ++rank) {
    analyzers::ProcessSummary& process = job.processes.emplace_back();
    process.rank = rank;
    process.world_size = 64;
    analyzers::CollectiveLedger& ledger = process.ledger;
    ledger.graphs.push_back({{{"ncclAllReduce", 1}}, 1, "train.py:30 in setup", 1, 0});
    ledger.names = {"ncclAllReduce"};
    for (int step = 0; step < 3000; ++step) {
      if (!(rank == 37 && step == 1000) && !(rank == 50 && step == 2500)) {
        ledger.Append(analyzers::LedgerEntry::Kind::kReplay, 0, 0);
      }
      ledger.Append(analyzers::LedgerEntry::Kind::kEager, 0, 0);
    }
  }
  const std::vector<analyzers::LedgerDivergence> divergences = analyzers::CompareLedgers(job);
  ASSERT_THAT(divergences, SizeIs(2));
  for (const analyzers::LedgerDivergence& d : divergences) {
    EXPECT_EQ(d.kind, analyzers::LedgerDivergence::Kind::kReplays);
    EXPECT_THAT(d.reference_ranks, SizeIs(62));
    if (d.ranks == std::vector<int32_t>{37}) {
      EXPECT_FALSE(d.past_kept);
      EXPECT_EQ(d.position, 2000u);
      EXPECT_THAT(analyzers::DescribeDivergence(d),
                  HasSubstr("part at their 2001st collective-bearing replay or eager collective: rank 37's was an "
                            "eager ncclAllReduce (its 1001st ncclAllReduce), where ranks 0-36,38-49,51-63's was a "
                            "replay of the graph captured at train.py:30 in setup (ncclAllReduce) (that graph's "
                            "1001st replay)"));
    } else {
      EXPECT_EQ(d.ranks, (std::vector<int32_t>{50}));
      EXPECT_TRUE(d.past_kept);
      EXPECT_EQ(d.position, analyzers::kMaxLedgerEntries);
      EXPECT_THAT(analyzers::DescribeDivergence(d), HasSubstr("agree on their first 4096"));
    }
  }
}

}  // namespace
}  // namespace graphcheck::testing_trace
