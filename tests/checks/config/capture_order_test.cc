#include "checks/config/capture_order.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace graphcheck::checks {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::testing::Optional;
using ::testing::Pair;

// The example of Megatron Core's convert_schedule_table_to_order docstring: PP2 N3M5 with VP2.
TEST(CaptureOrderTest, ScheduleTableOfTheMegatronExample) {
  absl::StatusOr<ScheduleTable> table = ParseScheduleTable("0:0 1:0 2:0 0:1 1:1 2:1 3:0 4:0 3:1 4:1");
  ASSERT_TRUE(table.ok()) << table.status();
  absl::StatusOr<std::vector<double>> order = ConvertScheduleTableToOrder(5, 2, *table);
  ASSERT_TRUE(order.ok()) << order.status();
  EXPECT_THAT(*order, ElementsAreArray({1, 1, 1, 2, 2, 2, -2, 1, -2, 1, -2, 2, -1, 2, -1, -1, -2, -2, -1, -1}));
}

TEST(CaptureOrderTest, ScheduleTableWithoutWarmupAlternates) {
  absl::StatusOr<std::vector<double>> order = ConvertScheduleTableToOrder(0, 2, {{0, 0}, {0, 1}});
  ASSERT_TRUE(order.ok());
  EXPECT_THAT(*order, ElementsAre(1, -2, 2, -1));
  EXPECT_FALSE(ConvertScheduleTableToOrder(0, 2, {{0, 2}}).ok());
  EXPECT_FALSE(ConvertScheduleTableToOrder(-1, 2, {{0, 0}}).ok());
}

// The examples of Megatron Core's get_overlap_moe_expert_parallel_comm_order docstring.
TEST(CaptureOrderTest, OverlapMoeOrderWithWgrad) {
  absl::StatusOr<LayerOrder> result = OverlapMoeExpertParallelCommOrder({1, 2, -2, 1, -1, -1}, {1, 2}, true);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_THAT(result->order, ElementsAreArray({1.0, 2.0, 3.0, 1.0, -3.0, -3.5, -2.0, -2.5, -1.0, -1.5, -1.0, -1.5}));
  ASSERT_EQ(result->chunk_ids.size(), 12u);
  EXPECT_THAT(result->chunk_ids[0], Optional(Pair(0, 0)));
  EXPECT_THAT(result->chunk_ids[1], Optional(Pair(1, 0)));
  EXPECT_THAT(result->chunk_ids[2], Optional(Pair(1, 1)));
  EXPECT_THAT(result->chunk_ids[3], Optional(Pair(0, 0)));
  for (size_t i = 4; i < 12; ++i) EXPECT_EQ(result->chunk_ids[i], std::nullopt) << i;
}

TEST(CaptureOrderTest, OverlapMoeOrderWithoutWgrad) {
  absl::StatusOr<LayerOrder> result = OverlapMoeExpertParallelCommOrder({1, 2, -2, 1, -1, -1}, {1, 2}, false);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_THAT(result->order, ElementsAreArray({1.0, 2.0, 3.0, 1.0, -3.0, -2.0, -1.0, -1.0}));
  ASSERT_EQ(result->chunk_ids.size(), 8u);
  EXPECT_THAT(result->chunk_ids[2], Optional(Pair(1, 1)));
  EXPECT_EQ(result->chunk_ids[4], std::nullopt);
  EXPECT_FALSE(OverlapMoeExpertParallelCommOrder({3}, {1, 2}, false).ok());
}

TEST(CaptureOrderTest, ParsesOrdersWithPositions) {
  absl::StatusOr<std::vector<OrderEntry>> entries = ParseOrderText("[1, 2,\n -2 -1.5 # wgrad\n]", "o.txt");
  ASSERT_TRUE(entries.ok()) << entries.status();
  ASSERT_EQ(entries->size(), 4u);
  EXPECT_EQ((*entries)[2].position.line, 2);
  EXPECT_EQ((*entries)[2].position.column, 2);
  EXPECT_EQ((*entries)[3].kind(), OrderEntry::Kind::kWgrad);
  EXPECT_EQ((*entries)[3].chunk(), 1);
  EXPECT_EQ((OrderEntry{0, {}}).kind(), OrderEntry::Kind::kInvalid);
  EXPECT_EQ((OrderEntry{1.5, {}}).kind(), OrderEntry::Kind::kInvalid);

  absl::StatusOr<std::vector<OrderEntry>> bad = ParseOrderText("1,\n2,x", "o.txt");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("o.txt:2:3: 'x' is not a number"));
  EXPECT_FALSE(ParseOrderText(" , ", "o.txt").ok());
}

TEST(CaptureOrderTest, TimelineHasOneLanePerChunk) {
  const std::string timeline = RenderTimeline(ToEntries({1, 2, -2, -1}));
  EXPECT_EQ(timeline,
            "step      1  2  3  4\n"
            "chunk 1  F0  .  . B0\n"
            "chunk 2   . F0 B0  .\n");
  EXPECT_EQ(FormatOrder(ToEntries({1, -2, -3.5})), "1, -2, -3.5");
  // Found by the fuzzer: a huge entry used to be converted to long long.
  EXPECT_EQ(FormatOrder(ToEntries({3.33333e+111})), "3.33333e+111");
}

TEST(CaptureOrderTest, TimelineWraps) {
  const std::string timeline = RenderTimeline(ToEntries({1, 1, -1, -1}), 2);
  EXPECT_EQ(timeline,
            "step      1  2\n"
            "chunk 1  F0 F1\n"
            "\n"
            "step      3  4\n"
            "chunk 1  B0 B1\n");
}

}  // namespace
}  // namespace graphcheck::checks
