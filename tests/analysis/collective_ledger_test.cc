// The collective ledger (analysis/collective_ledger.h) of one rank, on programs built in memory: its entries in
// order with their sites, and its bound.
#include "analysis/collective_ledger.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/checks/job/rank_program.h"

namespace graphcheck::testing_trace {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::SizeIs;

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
  const analysis::ProcessSummary summary = Summary(p.Build());
  EXPECT_THAT(summary.ledgers.communicators, SizeIs(0));  // no call named its communicator
  const analysis::CollectiveLedger& ledger = summary.ledgers.process;
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
  for (size_t step = 0; step < analysis::kMaxLedgerEntries; ++step) {
    p.Replay(12, 48);
    p.Eager("ncclAllReduce");
  }
  const analysis::CollectiveLedgers ledgers = Summary(p.Build()).ledgers;
  const analysis::CollectiveLedger& ledger = ledgers.process;
  EXPECT_THAT(ledger.entries, SizeIs(analysis::kMaxLedgerEntries));
  EXPECT_TRUE(ledger.truncated);
  EXPECT_EQ(ledger.replays, analysis::kMaxLedgerEntries);
  EXPECT_EQ(ledger.eager, analysis::kMaxLedgerEntries);
}

// NCCL 2.19+ names each call's communicator: besides the process's ledger of every entry, a process keeps one ledger
// per communicator. A graph whose capture calls on two communicators is replayed in both, each with its own calls.
TEST(CollectiveLedgerTest, KeepsOneLedgerPerCommunicator) {
  constexpr uint64_t kWorld = 0x5c1e04a2'00000001;
  constexpr uint64_t kSide = 0x0badcafe'00000002;
  RankProgram p(0, 2);
  p.UseCommunicator(kWorld);
  p.Capture(12, 30, {"ncclAllReduce", "ncclAllReduce"});
  p.UseCommunicator(kSide);
  p.Capture(13, 31, {"ncclBroadcast"});
  p.Replay(12, 48);
  p.Eager("ncclAllReduce", 60);  // on kSide
  p.Replay(13, 49);
  p.UseCommunicator(kWorld);
  p.Eager("ncclAllGather", 61);
  const analysis::CollectiveLedgers ledgers = Summary(p.Build()).ledgers;
  EXPECT_EQ(ledgers.process.replays, 2u);
  EXPECT_EQ(ledgers.process.eager, 2u);
  ASSERT_THAT(ledgers.process.entries, SizeIs(4));
  EXPECT_EQ(ledgers.process.Describe(ledgers.process.entries[1]), "an eager ncclAllReduce");
  ASSERT_THAT(ledgers.communicators, SizeIs(2));
  const analysis::CollectiveLedger& side = ledgers.communicators[0];  // by communicator
  const analysis::CollectiveLedger& world = ledgers.communicators[1];
  EXPECT_EQ(side.communicator, kSide);
  EXPECT_EQ(world.communicator, kWorld);
  ASSERT_THAT(world.graphs, SizeIs(1));
  EXPECT_EQ(world.GraphText(0), "the graph captured at /job/train.py:30 in setup (ncclAllReduce x2)");
  ASSERT_THAT(world.entries, SizeIs(2));
  EXPECT_EQ(world.Describe(world.entries[0]),
            "a replay of the graph captured at /job/train.py:30 in setup "
            "(ncclAllReduce x2)");
  EXPECT_EQ(world.Describe(world.entries[1]), "an eager ncclAllGather");
  ASSERT_THAT(side.entries, SizeIs(2));
  EXPECT_EQ(side.Describe(side.entries[0]), "an eager ncclAllReduce");
  EXPECT_EQ(side.Describe(side.entries[1]),
            "a replay of the graph captured at /job/train.py:31 in setup "
            "(ncclBroadcast)");
  EXPECT_EQ(analysis::CommunicatorText(kWorld), "communicator 5c1e04a2");
}

}  // namespace
}  // namespace graphcheck::testing_trace
