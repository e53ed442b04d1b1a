// The collective ledger (analysis/collective_ledger.h) of one rank, on programs built in memory: its entries in
// order with their sites, and its bound.
#include "analysis/collective_ledger.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/analyzers/rank_program.h"

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
  const analysis::CollectiveLedger& ledger = summary.ledger;
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
  const analysis::CollectiveLedger ledger = Summary(p.Build()).ledger;
  EXPECT_THAT(ledger.entries, SizeIs(analysis::kMaxLedgerEntries));
  EXPECT_TRUE(ledger.truncated);
  EXPECT_EQ(ledger.replays, analysis::kMaxLedgerEntries);
  EXPECT_EQ(ledger.eager, analysis::kMaxLedgerEntries);
}

}  // namespace
}  // namespace graphcheck::testing_trace
