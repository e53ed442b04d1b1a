// Graph launch intervals derived from replayed kernels, which carry their cudaGraphLaunch's correlation id.
#include <gtest/gtest.h>

#include "trace/events.h"

namespace graphcheck::trace {
namespace {

ApiCallRecord GraphLaunch(uint64_t correlation, int32_t rc = 0) {
  ApiCallRecord call;
  call.kind = ApiKind::kGraphLaunch;
  call.correlation_id = correlation;
  call.stream_id = 13;
  call.return_code = rc;
  return call;
}

KernelRecord Kernel(uint64_t correlation, uint64_t start, uint64_t end) {
  KernelRecord kernel;
  kernel.correlation_id = correlation;
  kernel.start_ns = start;
  kernel.end_ns = end;
  kernel.graph_id = 2;
  return kernel;
}

TEST(DeriveGraphLaunchesTest, SpansTheKernelsOfEachReplay) {
  Trace trace;
  for (const ApiCallRecord& call : {GraphLaunch(10), GraphLaunch(11), GraphLaunch(12, /*rc=*/900)}) {
    trace.AddCall(call);
  }
  for (const KernelRecord& k : {Kernel(10, 100, 150), Kernel(10, 160, 300), Kernel(11, 400, 450), Kernel(99, 0, 1)}) {
    trace.AddKernel(k);
  }
  DeriveGraphLaunches(&trace);
  ASSERT_EQ(trace.graph_launches.size(), 2u);  // the failed launch ran nothing
  EXPECT_EQ(trace.graph_launches[0].start_ns, 100u);
  EXPECT_EQ(trace.graph_launches[0].end_ns, 300u);
  EXPECT_EQ(trace.graph_launches[0].graph_id, 2u);
  EXPECT_EQ(trace.graph_launches[0].stream_id, 13u);
  EXPECT_EQ(trace.graph_launches[1].start_ns, 400u);
}

// Replays launched after a launch-recording window closed still produce records for graphs instantiated inside it,
// with the correlation id of the last recorded launch: the launch keeps its own nodes only, up to the first node that
// repeats (kernels) and the graph's node count (copies and memsets, which carry no node id).
TEST(DeriveGraphLaunchesTest, LeavesOutTheRecordsOfLaterUnrecordedReplays) {
  Trace trace;
  ApiCallRecord end_capture;
  end_capture.kind = ApiKind::kCaptureEnd;
  end_capture.graph_id = 5;
  end_capture.node_count = 3;  // two kernels and a copy
  trace.AddCall(end_capture);
  ApiCallRecord launch = GraphLaunch(10);
  launch.graph_id = 5;
  trace.AddCall(launch);
  for (uint64_t replay_start : {100, 5000, 9000}) {
    for (uint64_t k = 0; k < 2; ++k) {
      KernelRecord kernel = Kernel(10, replay_start + 100 * k, replay_start + 100 * k + 50);
      kernel.graph_node_id = 1 + k;
      trace.AddKernel(kernel);
    }
    MemoryActivity copy;
    copy.correlation_id = 10;
    copy.start_ns = replay_start + 200;
    copy.end_ns = replay_start + 260;
    trace.memory.push_back(copy);
  }
  DeriveGraphLaunches(&trace);
  ASSERT_EQ(trace.graph_launches.size(), 1u);
  EXPECT_EQ(trace.graph_launches[0].start_ns, 100u);
  EXPECT_EQ(trace.graph_launches[0].end_ns, 360u);

  // Without node ids the node count alone bounds it.
  Trace counted;
  counted.AddCall(end_capture);
  counted.AddCall(launch);
  for (uint64_t start : {100, 200, 300, 5000}) counted.AddKernel(Kernel(10, start, start + 50));
  DeriveGraphLaunches(&counted);
  ASSERT_EQ(counted.graph_launches.size(), 1u);
  EXPECT_EQ(counted.graph_launches[0].end_ns, 350u);
}

TEST(DeriveGraphLaunchesTest, KeepsRecordedGraphLaunches) {
  Trace trace;
  trace.AddCall(GraphLaunch(10));
  trace.AddKernel(Kernel(10, 100, 150));
  GraphLaunchActivity recorded;
  recorded.correlation_id = 10;
  recorded.start_ns = 90;
  recorded.end_ns = 200;
  trace.graph_launches = {recorded};
  DeriveGraphLaunches(&trace);
  ASSERT_EQ(trace.graph_launches.size(), 1u);
  EXPECT_EQ(trace.graph_launches[0].start_ns, 90u);
}

}  // namespace
}  // namespace graphcheck::trace
