// Where the ranks' collective ledgers part (analysis/ledger_comparison.h), on ledgers built directly: 64 ranks of
// 6000 entries with partings inside and past the kept runs, and the fork before a parting (the first same work made
// at other program lines) with what DescribeDivergence and ReplayCountDifferences say of it.
#include "analysis/ledger_comparison.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace graphcheck::analysis {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::SizeIs;

// Rank `rank` of `world_size` in `job`: its ledger holds one graph, captured at train.py:30, whose capture made one
// all-reduce, and knows the eager ncclAllReduce.
CollectiveLedger& AddRank(JobSummary* job, int rank, int world_size) {
  ProcessSummary& process = job->processes.emplace_back();
  process.rank = rank;
  process.world_size = world_size;
  CollectiveLedger& ledger = process.ledgers.process;
  ledger.graphs.push_back({{{"ncclAllReduce", 1}}, 1, "train.py:30 in setup", 1, 0});
  ledger.names = {"ncclAllReduce"};
  return ledger;
}

// The comparison on ledgers of 64 ranks, built directly: 3000 steps of a replay and an eager all-reduce each (6000
// entries, past what a ledger keeps). Rank 37 skips its replay at step 1000; rank 50 at step 2500, past the kept runs.
TEST(LedgerComparisonTest, SixtyFourRanksFindThePartingWithinAndPastTheKeptRuns) {
  JobSummary job;
  for (int rank = 0; rank < 64; ++rank) {
    CollectiveLedger& ledger = AddRank(&job, rank, 64);
    for (int step = 0; step < 3000; ++step) {
      if (!(rank == 37 && step == 1000) && !(rank == 50 && step == 2500)) {
        ledger.Append(LedgerEntry::Kind::kReplay, 0, 0);
      }
      ledger.Append(LedgerEntry::Kind::kEager, 0, 0);
    }
  }
  const std::vector<LedgerDivergence> divergences = CompareLedgers(job);
  ASSERT_THAT(divergences, SizeIs(2));
  for (const LedgerDivergence& d : divergences) {
    EXPECT_EQ(d.kind, LedgerDivergence::Kind::kReplays);
    EXPECT_THAT(d.reference_ranks, SizeIs(62));
    if (d.ranks == std::vector<int32_t>{37}) {
      EXPECT_FALSE(d.past_kept);
      EXPECT_EQ(d.position, 2000u);
      EXPECT_THAT(DescribeDivergence(d),
                  HasSubstr("part at their 2001st collective-bearing replay or eager collective: rank 37's was an "
                            "eager ncclAllReduce (its 1001st ncclAllReduce), where ranks 0-36,38-49,51-63's was a "
                            "replay of the graph captured at train.py:30 in setup (ncclAllReduce) (that graph's "
                            "1001st replay)"));
    } else {
      EXPECT_EQ(d.ranks, (std::vector<int32_t>{50}));
      EXPECT_TRUE(d.past_kept);
      EXPECT_EQ(d.position, kMaxLedgerEntries);
      EXPECT_THAT(DescribeDivergence(d), HasSubstr("agree on their first 4096"));
    }
  }
}

// Rank 0 replays its step graph once more after step 2, from another line: the ledgers agree on every entry's work
// until rank 1's end, and the fork is rank 0's extra replay, the 3rd of that graph, made at train.py:52.
TEST(LedgerComparisonTest, TheForkIsTheFirstSameWorkMadeAtAnotherLine) {
  JobSummary job;
  for (int rank = 0; rank < 2; ++rank) {
    CollectiveLedger& ledger = AddRank(&job, rank, 2);
    ledger.sites = {"", "train.py:48 in step", "train.py:52 in log"};
    ledger.site_frames = {SourceFrame(), {"train.py", 48, "step", true}, {"train.py", 52, "log", true}};
    for (int step = 1; step <= 4; ++step) {
      ledger.Append(LedgerEntry::Kind::kReplay, 0, 1);
      if (rank == 0 && step == 2) ledger.Append(LedgerEntry::Kind::kReplay, 0, 2);
    }
  }
  const std::vector<LedgerDivergence> divergences = CompareLedgers(job);
  ASSERT_THAT(divergences, SizeIs(1));
  const LedgerDivergence& d = divergences[0];
  EXPECT_EQ(d.ranks, std::vector<int32_t>{1});
  EXPECT_EQ(d.position, 4u);  // rank 1 made 4 replays, rank 0 a 5th
  ASSERT_TRUE(d.fork.has_value());
  EXPECT_EQ(d.fork->position, 2u);
  EXPECT_EQ(d.fork->reference.entry->site, 2u);  // rank 0's, at train.py:52
  EXPECT_EQ(d.fork->reference.occurrence, 3u);
  EXPECT_THAT(DescribeDivergence(d), HasSubstr("went different ways at their 3rd collective-bearing graph replay, the "
                                               "3rd replay of the graph captured at train.py:30 in setup "
                                               "(ncclAllReduce): rank 1 made it at train.py:48 in step, rank 0 at "
                                               "train.py:52 in log. Their ledgers part at the 5th"));
  EXPECT_THAT(ReplayCountDifferences(d), ElementsAre(HasSubstr("4 times, rank 0 5")));
}

// Each named communicator's ledgers are compared among the ranks that used it: ranks 0 and 1 share a second
// communicator, on which rank 1 calls once more. The processes' ledgers part too (as eager collectives only, which the
// check names only where the job hung); the communicator's parting is named with it.
TEST(LedgerComparisonTest, ComparesEachCommunicatorAmongItsRanks) {
  constexpr uint64_t kWorld = 0x1111111100000000;
  constexpr uint64_t kPair = 0x2222222200000000;
  JobSummary job;
  for (int rank = 0; rank < 4; ++rank) {
    ProcessSummary& process = job.processes.emplace_back();
    process.rank = rank;
    process.world_size = 4;
    CollectiveLedger& whole = process.ledgers.process;
    whole.names = {"ncclAllReduce", "ncclAllGather"};
    CollectiveLedger& world = process.ledgers.communicators.emplace_back();
    world.communicator = kWorld;
    world.names = {"ncclAllReduce"};
    for (int step = 0; step < 3; ++step) {
      world.Append(LedgerEntry::Kind::kEager, 0, 0);
      whole.Append(LedgerEntry::Kind::kEager, 0, 0);
    }
    if (rank >= 2) continue;
    CollectiveLedger& pair = process.ledgers.communicators.emplace_back();
    pair.communicator = kPair;
    pair.names = {"ncclAllGather"};
    for (int step = 0; step < 2 + rank; ++step) {
      pair.Append(LedgerEntry::Kind::kEager, 0, 0);
      whole.Append(LedgerEntry::Kind::kEager, 1, 0);
    }
  }
  const std::vector<LedgerDivergence> divergences = CompareLedgers(job);
  ASSERT_FALSE(divergences.empty());
  EXPECT_EQ(divergences.front().communicator, 0u);  // the processes' ledgers come first
  const LedgerDivergence& d = divergences.back();
  EXPECT_EQ(d.communicator, kPair);
  EXPECT_EQ(d.kind, LedgerDivergence::Kind::kEager);
  EXPECT_EQ(d.ranks, std::vector<int32_t>{1});
  EXPECT_EQ(d.reference_ranks, std::vector<int32_t>{0});
  EXPECT_THAT(DescribeDivergence(d), HasSubstr("rank 1 of 4 and rank 0 part at their 3rd eager collective on "
                                               "communicator 22222222: rank 1's was an eager ncclAllGather (its 3rd "
                                               "ncclAllGather), where rank 0 made no more (2 in all)"));
}

}  // namespace
}  // namespace graphcheck::analysis
