// rank-divergent-collectives and what `hang` says of the ledgers, on jobs built in memory: a rank that replays its
// all-reduce graph once more every 10 steps to log a loss, ranks that order a replay and an eager all-reduce
// differently, eager collectives that part only where the job hung, clean twins, and a synthetic job of 8 ranks.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "tests/checks/job/rank_program.h"

namespace graphcheck::testing_trace {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::SizeIs;

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
  EXPECT_THAT(f.evidence, Contains(HasSubstr("(ncclAllReduce x4) 40 times, rank 0 44")));
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
  EXPECT_THAT(findings[0].evidence, Contains(HasSubstr("40 times, rank 0 44")));
}

// Counts of one are singular: "1 time", "1 collective-bearing replay", "1 eager collective".
TEST(RankDivergentCollectivesTest, CountsOfOneAreSingular) {
  const Job job = BuildJob(2, [](int rank, RankProgram& p) {
    p.Capture(12, 30, {"ncclAllReduce"});
    p.Eager("ncclBroadcast", 40);
    for (int step = 0; step < (rank == 0 ? 2 : 1); ++step) p.Replay(12, 0);
  });
  const std::vector<Finding> findings = Divergences(job);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].evidence, Contains(HasSubstr("(ncclAllReduce) 1 time, rank 0 2")));
  EXPECT_THAT(findings[0].evidence,
              Contains(HasSubstr("rank 1's ledger: 1 collective-bearing replay, 1 eager collective")));
  EXPECT_THAT(findings[0].evidence,
              Contains(HasSubstr("rank 0's ledger: 2 collective-bearing replays, 1 eager collective")));
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

// Eager collectives alone, on calls that do not name their communicator (NCCL before 2.19), may part by design (a
// collective on a subgroup only some ranks belong to): silent, unless the job hung, where they are the cause to name.
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

// A loss logged on a process group of its own, before the replay on rank 1 and after it on rank 0: the calls are on
// two communicators, yet they part as on one (seen on two H200s: the eager all-reduce makes the current stream wait,
// and the replay behind it waits for a partner the other rank issues after its own replay; the job hung). The
// processes' ledgers name it.
TEST(RankDivergentCollectivesTest, WorkOnTwoCommunicatorsInOtherOrdersParts) {
  constexpr uint64_t kWorld = 0x1111111100000000;
  constexpr uint64_t kLogGroup = 0x2222222200000000;
  const Job job = BuildJob(2, [](int rank, RankProgram& p) {
    p.UseCommunicator(kWorld);
    p.Capture(12, 30, {"ncclAllReduce"});
    p.UseCommunicator(kLogGroup);
    for (int step = 1; step <= 20; ++step) {
      if (rank == 1 && step % 10 == 0) p.Eager("ncclAllReduce", 60);
      p.Replay(12, 48);
      if (rank == 0 && step % 10 == 0) p.Eager("ncclAllReduce", 62);
    }
  });
  const std::vector<Finding> findings = Divergences(job);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].message, HasSubstr("part at their 10th collective-bearing replay or eager collective: "));
  EXPECT_THAT(findings[0].fix, HasSubstr("same order"));
}

// As on two H200s (ddp-capture-order): the ranks capture a broadcast (on the world's communicator) and DDP's
// all-reduce (on another) in other orders, and rank 0 stops early. rank-divergent-capture names the captures; the
// all-reduce communicator's ledgers, which agree until rank 0 stopped, say nothing more.
TEST(RankDivergentCollectivesTest, ACommunicatorsPartingAfterCapturesThatDifferIsLeftToThem) {
  constexpr uint64_t kWorld = 0x1111111100000000;
  constexpr uint64_t kReducer = 0x5555555500000000;
  const Job job = BuildJob(2, [&](int rank, RankProgram& p) {
    if (rank == 0) {
      p.CaptureCalls(12, 30, {{"ncclAllReduce", kReducer}, {"ncclBroadcast", kWorld}});
    } else {
      p.CaptureCalls(12, 30, {{"ncclBroadcast", kWorld}, {"ncclAllReduce", kReducer}});
    }
    for (int step = 0; step < (rank == 0 ? 15 : 20); ++step) p.Replay(12, 48);
  });
  EXPECT_THAT(Divergences(job), IsEmpty());
}

// On a communicator the calls name, eager collectives that part are a cause whether or not the job hung: every rank
// that calls on a communicator belongs to it.
TEST(RankDivergentCollectivesTest, EagerCollectivesThatPartOnANamedCommunicatorAreNamed) {
  const Job job = BuildJob(2, [](int rank, RankProgram& p) {
    p.UseCommunicator(0x3333333300000000);
    p.Eager("ncclAllReduce", 60);
    if (rank == 0) p.Eager("ncclBroadcast", 61);
    p.Eager("ncclAllReduce", 60);
  });
  const std::vector<Finding> findings = Divergences(job);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].message, HasSubstr("part at their 2nd eager collective on communicator 33333333"));
  EXPECT_THAT(findings[0].evidence, Contains(HasSubstr("rank 0's ledger of communicator 33333333: 0 collective-bearing "
                                                       "replays, 3 eager collectives")));
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

// Seen on two H200s: rank 0 replayed its all-reduce graph once more (11 against 10), hung on that replay, and rank 1,
// waiting at the teardown, was killed. The extra replay is the cause, not rank 1's stop.
TEST(RankDivergentCollectivesTest, AnExtraReplayIsBlamedNotTheRankKilledAfterIt) {
  const Job job = BuildJob(2, [](int rank, RankProgram& p) {
    p.Capture(12, 30, {"ncclAllReduce"});
    for (int step = 1; step <= 10; ++step) p.Replay(12, 48);
    if (rank == 0) {
      p.Replay(12, 52, "log");
      p.Hang(90);
    } else {
      p.Killed();
    }
  });
  const std::vector<Finding> findings = Divergences(job);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].evidence, Contains(HasSubstr("10 times, rank 0 11")));
  EXPECT_THAT(findings[0].fix, Not(HasSubstr("fix what stopped it")));
  EXPECT_THAT(findings[0].fix, HasSubstr("Rank 0's replay at /job/train.py:52 in log is the extra work"));
  EXPECT_THAT(findings[0].fix, HasSubstr("rank 1's process was killed (its trace has no end) only after the ranks"));
  EXPECT_THAT(findings[0].fix, HasSubstr("the same number of times"));
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

// Two ranks that replay their all-reduce graph 5 times each, then `wait`.
Job AgreeingRanksThatThen(const std::function<void(RankProgram&)>& wait) {
  return BuildJob(2, [&wait](int, RankProgram& p) {
    p.Capture(12, 30, {"ncclAllReduce"});
    for (int step = 0; step < 5; ++step) p.Replay(12, 48);
    wait(p);
  });
}

TEST(RankDivergentCollectivesTest, HangSaysWhenTheLedgersAgree) {
  const Job job = AgreeingRanksThatThen([](RankProgram& p) { p.Hang(90); });
  const std::vector<Finding> findings = Analyze(job, "hang,rank-divergent-collectives").findings;
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].check_id, "hang");
  EXPECT_THAT(findings[0].message, HasSubstr("Yet the 2 ranks' collective ledgers agree: each made 5 "
                                             "collective-bearing graph replays and 0 eager collectives"));
  EXPECT_THAT(findings[0].fix, HasSubstr("Look past the order of the collectives"));
}

// Seen on two H200s (ddp-graph-alive): every rank waits in destroy_process_group while its all-reduce graph is alive.
// The ledgers agree, and the hang keeps its own cause's fix.
TEST(RankDivergentCollectivesTest, AgreeingLedgersKeepTheFixOfAHangWithItsOwnCause) {
  const Job job = AgreeingRanksThatThen([](RankProgram& p) { p.TeardownWithLiveGraph(12, 90); });
  const std::vector<Finding> findings = Analyze(job, "hang,rank-divergent-collectives").findings;
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].message, HasSubstr("Still alive at the wait"));
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

}  // namespace
}  // namespace graphcheck::testing_trace
