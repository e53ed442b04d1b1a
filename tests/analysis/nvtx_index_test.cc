#include "analysis/nvtx_index.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/checks/trace/trace_builder.h"

namespace graphcheck::testing_trace {
namespace {

TEST(NvtxIndexTest, PathOfOpenPushRangesPerThread) {
  TraceBuilder b;
  b.Push(100, 1, "train_step");
  b.Push(200, 1, "forward");
  b.Push(250, 2, "data");
  b.Pop(300, 1);
  b.Push(400, 1, "backward");
  b.Pop(500, 1);
  b.Pop(600, 1);
  const trace::Trace trace = b.Build();
  const analysis::NvtxIndex index(trace);
  EXPECT_EQ(index.PathAt(1, 50), "");
  EXPECT_EQ(index.PathAt(1, 150), "train_step");
  EXPECT_EQ(index.PathAt(1, 250), "train_step/forward");
  EXPECT_EQ(index.PathAt(1, 450), "train_step/backward");
  EXPECT_EQ(index.PathAt(1, 700), "");
  EXPECT_EQ(index.PathAt(2, 450), "data");
  EXPECT_EQ(index.PathAt(3, 450), "");
}

// NCCL wraps each of its calls in a range of its own domain, inside the program's step on the training thread and in
// backward on the autograd thread (seen on an H100 with one-rank DDP): those ranges are neither part of the program's
// path nor steps, and their pops do not close the program's ranges.
TEST(NvtxIndexTest, LibraryDomainsKeepTheirOwnStacks) {
  TraceBuilder b;
  for (uint64_t step = 0; step < 3; ++step) {
    const uint64_t t = 1000 * step;
    b.Push(t + 100, 1, "train_step");
    for (uint64_t call = 0; call < 4; ++call) {
      b.Push(t + 200 + 10 * call, 2, "ncclAllReduce", "NCCL");
      b.Pop(t + 205 + 10 * call, 2, "NCCL");
    }
    b.Push(t + 300, 1, "ncclBroadcast", "NCCL");
    b.Pop(t + 310, 1, "NCCL");
    b.Pop(t + 900, 1);
  }
  const trace::Trace trace = b.Build();
  const analysis::NvtxIndex index(trace);
  EXPECT_EQ(index.MostRepeatedOutermostRange(3), "train_step");
  EXPECT_EQ(index.PathAt(1, 305), "train_step");
  EXPECT_EQ(index.PathAt(1, 500), "train_step");  // NCCL's pop did not close the step
  EXPECT_EQ(index.PathAt(2, 202), "");
  EXPECT_EQ(index.RangesNamed("train_step").size(), 3u);

  const std::vector<analysis::DomainRange> nccl = index.RangesInDomain("NCCL");
  ASSERT_EQ(nccl.size(), 15u);
  EXPECT_EQ(nccl[0].name, "ncclAllReduce");
  EXPECT_EQ(nccl[0].start_ns, 200u);
  EXPECT_EQ(nccl[0].end_ns, 205u);
  EXPECT_EQ(nccl[0].thread_id, 2u);
  EXPECT_EQ(nccl[4].name, "ncclBroadcast");
  EXPECT_TRUE(index.RangesInDomain("NVTE").empty());
}

TEST(NvtxIndexTest, RangesNamedPairsPushPopAndStartEnd) {
  TraceBuilder b;
  b.Push(100, 1, "step");
  b.Pop(200, 1);
  b.Push(300, 1, "other");
  b.Pop(400, 1);
  trace::NvtxEvent start;
  start.kind = trace::NvtxEvent::Kind::kRangeStart;
  start.thread_id = 2;
  start.time_ns = 500;
  start.range_id = 9;
  start.message = b.trace().Intern("step");
  trace::NvtxEvent end = start;
  end.kind = trace::NvtxEvent::Kind::kRangeEnd;
  end.thread_id = 1;  // ended on another thread
  end.time_ns = 700;
  end.message = 0;
  b.trace().nvtx.push_back(end);
  b.trace().nvtx.push_back(start);
  b.Push(800, 1, "step");  // never popped
  const trace::Trace trace = b.Build();
  const std::vector<analysis::TimeInterval> ranges = analysis::NvtxIndex(trace).RangesNamed("step");
  ASSERT_EQ(ranges.size(), 2u);
  EXPECT_EQ(ranges[0].start_ns, 100u);
  EXPECT_EQ(ranges[0].end_ns, 200u);
  EXPECT_EQ(ranges[1].start_ns, 500u);
  EXPECT_EQ(ranges[1].end_ns, 700u);
  EXPECT_EQ(ranges[1].thread_id, 2u);
}

}  // namespace
}  // namespace graphcheck::testing_trace
