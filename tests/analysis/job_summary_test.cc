// What a distributed job keeps of each process once its trace is dropped: who it is and, per capture, the outcome,
// node count and kernel sequence; the graph machinery's own pool capture left out.
#include "analysis/job_summary.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/checks/trace/probe_test_util.h"

namespace graphcheck::testing_trace {
namespace {

using ::testing::SizeIs;

TEST(JobSummaryTest, SummarizesTheProcessAndEachCapture) {
  TraceBuilder b;
  b.trace().process.rank = 3;
  b.trace().process.world_size = 8;
  b.trace().process.hostname = "node0";
  b.trace().process.pid = 77;
  // cudagraph trees' pool capture: not the program's work, left out.
  b.Probe(100, 1, ProbeEventKind::kCaptureBegin, 1, ProbeOrigin::kCudagraphTreesInit);
  b.Begin(200, 1, kStream, CaptureMode::kThreadLocal);
  b.End(300, 1, kStream, 1, 0, 0);
  // A graph of two kernels, then a capture that failed.
  b.Begin(1000, 1, kStream);
  TraceBuilder::In(b.Launch(1100, 1, kStream, "gemm"), 2);
  TraceBuilder::In(b.Launch(1200, 1, kStream, "relu"), 2);
  b.End(1300, 1, kStream, 2, 0, 2);
  b.Begin(2000, 1, kStream);
  b.End(2300, 1, kStream, 3, 901, 0);
  const trace::Trace trace = b.Build();
  const analysis::TraceAnalysis analysis(trace);
  const analysis::ProcessSummary summary = analysis::SummarizeProcess(analysis);
  EXPECT_EQ(summary.rank, 3);
  EXPECT_EQ(summary.world_size, 8);
  EXPECT_EQ(summary.host, "node0");
  EXPECT_EQ(summary.pid, 77u);
  ASSERT_THAT(summary.captures, SizeIs(2));
  EXPECT_TRUE(summary.captures[0].made_graph);
  EXPECT_EQ(summary.captures[0].nodes, 2u);
  EXPECT_EQ(summary.captures[0].kernel_sequence, analysis.captures().windows()[1].kernel_sequence);
  EXPECT_EQ(summary.captures[0].where.api, "cudaStreamBeginCapture");
  EXPECT_FALSE(summary.captures[1].made_graph);
}

}  // namespace
}  // namespace graphcheck::testing_trace
