// NCCL's calls from its NVTX domain: the calls that began while a capture was open, run-length encoded in call order.
#include "analysis/collectives.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/checks/trace/trace_builder.h"

namespace graphcheck::testing_trace {
namespace {

using ::testing::ElementsAre;

TEST(CollectivesTest, CallsInTheSpanInOrderRunLengthEncoded) {
  TraceBuilder b;
  const std::vector<std::pair<uint64_t, std::string>> calls = {
      {500, "ncclAllReduce"},   // before the span
      {1000, "ncclAllReduce"},  // at its start: in
      {1200, "ncclAllReduce"}, {1400, "ncclBroadcast"},
      {1600, "ncclAllReduce"}, {2000, "ncclAllGather"},  // at its end: in
      {2500, "ncclAllReduce"},                           // after
  };
  for (const auto& [t, name] : calls) {
    b.Push(t, t == 1200 ? 2 : 1, name, "NCCL");  // the autograd thread's calls count too
    b.Pop(t + 50, t == 1200 ? 2 : 1, "NCCL");
  }
  b.Push(1300, 1, "train_step");  // the program's own range: not NCCL's
  b.Pop(1350, 1);
  const trace::Trace trace = b.Build();
  const std::vector<analysis::CollectiveRun> runs =
      analysis::CollectivesBetween(analysis::NvtxIndex(trace).RangesInDomain("NCCL"), 1000, 2000);
  EXPECT_THAT(runs,
              ElementsAre(analysis::CollectiveRun{"ncclAllReduce", 2}, analysis::CollectiveRun{"ncclBroadcast", 1},
                          analysis::CollectiveRun{"ncclAllReduce", 1}, analysis::CollectiveRun{"ncclAllGather", 1}));
  EXPECT_EQ(analysis::DescribeCollectives(runs), "ncclAllReduce x2, ncclBroadcast, ncclAllReduce, ncclAllGather");
}

TEST(CollectivesTest, NoCallIsSaidSo) {
  EXPECT_EQ(analysis::DescribeCollectives({}), "no NCCL call");
  EXPECT_TRUE(analysis::CollectivesBetween({}, 0, UINT64_MAX).empty());
}

}  // namespace
}  // namespace graphcheck::testing_trace
