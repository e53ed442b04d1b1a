#include "checks/checks.h"

#include "checks/config/capture_order.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/checks/config/config_check_test_util.h"

namespace graphcheck::checks {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::vector<Finding> RunOn(const CaptureOrder& order) {
  const std::unique_ptr<Check> check = NewScheduleOrderCheck();
  CheckInputs inputs;
  inputs.Add(order);
  EXPECT_TRUE(check->CanRun(inputs));
  const CheckOptions options;
  std::vector<Finding> findings;
  check->Run(inputs, BoundOptions(check->info(), options), &findings);
  for (const Finding& finding : findings) EXPECT_EQ(finding.check_id, "schedule-order");
  return findings;
}

CaptureOrder FromText(const std::string& text) {
  absl::StatusOr<std::vector<OrderEntry>> entries = ParseOrderText(text, "order.txt");
  EXPECT_TRUE(entries.ok()) << entries.status();
  CaptureOrder order;
  order.entries = entries.ok() ? *entries : std::vector<OrderEntry>{};
  order.file = "order.txt";
  order.key = "_order";
  return order;
}

auto MessageHas(const std::string& text) { return Field(&Finding::message, HasSubstr(text)); }

TEST(ScheduleOrderTest, AcceptsTheMegatronExampleOrder) {
  CaptureOrder order = FromText("1 1 1 2 2 2 -2 1 -2 1 -2 2 -1 2 -1 -1 -2 -2 -1 -1");
  order.chunks = 2;
  order.microbatches = 5;
  order.callables = 4;
  order.sample_args = 20;
  EXPECT_THAT(RunOn(order), IsEmpty());
}

TEST(ScheduleOrderTest, NamesTheCountsOfTheUnevenDocstringOrder) {
  // Megatron's illustration runs layer 1 for two microbatches and layers 2 and 3 for one: TE would reject it.
  const std::vector<Finding> findings = RunOn(FromText("1, 2, 3, 1, -3, -3.5, -2, -2.5, -1, -1.5, -1, -1.5"));
  EXPECT_THAT(findings, ElementsAre(MessageHas("8 forward and backward entries, which is not 2 x 3 chunks"),
                                    MessageHas("Chunk 1 has 2 forwards and 2 backwards; 1 microbatch needs 1 of each"),
                                    MessageHas("Chunk 1 has 2 weight-gradient passes for 1 microbatch.")));
}

TEST(ScheduleOrderTest, FlagsBackwardBeforeForwardAtItsPosition) {
  const std::vector<Finding> findings = RunOn(FromText("1,\n-1, -2, 2"));
  ASSERT_THAT(findings, ElementsAre(MessageHas("backward 1 of chunk 2 comes before its forward")));
  EXPECT_EQ(findings[0].where.file, "order.txt");
  EXPECT_EQ(findings[0].where.line, 2);
  EXPECT_EQ(findings[0].where.column, 5);
  EXPECT_EQ(findings[0].where.key, "_order");
  EXPECT_THAT(findings[0].message, HasSubstr("Entry 3 (-2)"));
}

TEST(ScheduleOrderTest, FlagsIdsOutOfRangeAndZero) {
  CaptureOrder order = FromText("1 0 3 -1");
  order.chunks = 2;
  EXPECT_THAT(RunOn(order), ::testing::IsSupersetOf({MessageHas("Entry 2 (0): not a chunk id"),
                                                     MessageHas("Entry 3 (3): chunk 3 is out of range")}));
}

TEST(ScheduleOrderTest, FlagsCountsThatDoNotMatchTheMicrobatches) {
  CaptureOrder order = FromText("1 1 -1 2 -2 -1");
  order.microbatches = 2;
  EXPECT_THAT(RunOn(order),
              ElementsAre(MessageHas("Chunk 2 has 1 forward and 1 backward; 2 microbatches need 2 of each")));
}

TEST(ScheduleOrderTest, FlagsALengthTransformerEngineRejects) {
  EXPECT_THAT(RunOn(FromText("1 2 -2 -1 1 -1")),
              ::testing::Contains(MessageHas("not 2 x 2 chunks x a whole number of microbatches")));
}

TEST(ScheduleOrderTest, FlagsCallablesAndSampleArgumentsThatDoNotMatch) {
  CaptureOrder order = FromText("1 2 -2 -1 1 2 -2 -1");  // 2 chunks, 2 microbatches
  order.sample_args = 8;                                 // 2 layers per chunk -> 4 callables
  order.callables = 3;
  EXPECT_THAT(RunOn(order), ElementsAre(MessageHas("3 callables are given")));
  order.callables = 4;
  EXPECT_THAT(RunOn(order), IsEmpty());
  order.sample_args = 6;
  EXPECT_THAT(RunOn(order), ::testing::Contains(MessageHas("6 sample arguments do not fit")));
  order.sample_args.reset();
  order.layers_per_chunk = {1, 2};
  order.callables = 3;
  EXPECT_THAT(RunOn(order), IsEmpty());
  order.sample_args = 5;
  EXPECT_THAT(RunOn(order), ElementsAre(MessageHas("3 layers x 2 microbatches need 6")));
}

TEST(ScheduleOrderTest, ChunksWithoutEntriesAreOneFinding) {
  // Found by the fuzzer: a huge chunk id used to cost one step (and one finding) per chunk.
  EXPECT_THAT(RunOn(FromText("333333332 -2 332 -2 -1 -1")),
              ::testing::Contains(MessageHas("333333328 of the 333333332 chunks have no entries (chunk 3 is one)")));
}

TEST(ScheduleOrderTest, FlagsWgradBeforeItsBackward) {
  EXPECT_THAT(RunOn(FromText("1 -1.5 -1")), ElementsAre(MessageHas("weight-gradient pass 1 of chunk 1")));
}

}  // namespace
}  // namespace graphcheck::checks
