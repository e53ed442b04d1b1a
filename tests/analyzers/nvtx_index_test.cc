#include "analyzers/nvtx_index.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/analyzers/trace_builder.h"

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
  const analyzers::NvtxIndex index(trace);
  EXPECT_EQ(index.PathAt(1, 50), "");
  EXPECT_EQ(index.PathAt(1, 150), "train_step");
  EXPECT_EQ(index.PathAt(1, 250), "train_step/forward");
  EXPECT_EQ(index.PathAt(1, 450), "train_step/backward");
  EXPECT_EQ(index.PathAt(1, 700), "");
  EXPECT_EQ(index.PathAt(2, 450), "data");
  EXPECT_EQ(index.PathAt(3, 450), "");
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
  const std::vector<analyzers::TimeInterval> ranges = analyzers::NvtxIndex(trace).RangesNamed("step");
  ASSERT_EQ(ranges.size(), 2u);
  EXPECT_EQ(ranges[0].start_ns, 100u);
  EXPECT_EQ(ranges[0].end_ns, 200u);
  EXPECT_EQ(ranges[1].start_ns, 500u);
  EXPECT_EQ(ranges[1].end_ns, 700u);
  EXPECT_EQ(ranges[1].thread_id, 2u);
}

}  // namespace
}  // namespace graphcheck::testing_trace
