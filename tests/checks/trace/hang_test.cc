// hang: a Hang record (graphcheck run --hang-timeout) is one finding at the waiting line, naming the NCCL collectives
// of the graph the thread launched last; a trace without one has none, and the hung end is not trace-incomplete.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "checks/checks.h"
#include "tests/checks/trace/trace_builder.h"

namespace graphcheck::testing_trace {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

// Thread 1 waited 31 s in cudaStreamSynchronize on stream 7 after launching `last_graph`, past a 30 s bound.
void AddHang(TraceBuilder& b, uint32_t last_graph) {
  trace::Hang& hang = b.trace().hangs.emplace_back();
  hang.thread_id = 1;
  hang.since_ns = 20000;
  hang.time_ns = 20000 + 31'000'000'000ull;
  hang.timeout_ns = 30'000'000'000ull;
  hang.call = b.trace().Intern("cudaStreamSynchronize");
  hang.stream_id = 7;
  hang.last_graph_id = last_graph;
  hang.stack = b.PythonStack({{"/home/me/train.py", 88, "step"}});
  b.trace().integrity.end = trace::TraceEnd::kHung;
}

// A captured graph 12 holding two all-reduces and a matmul, replayed, then a synchronize that the watch ended.
trace::Trace HungTrace(uint32_t last_graph) {
  TraceBuilder b;
  b.Begin(1000, 1, 7);
  TraceBuilder::In(b.Launch(2000, 1, 7, "ncclDevKernel_AllReduce_Sum_f32_RING_LL"), 5);
  TraceBuilder::In(b.Launch(3000, 1, 7, "ampere_sgemm_128x64_nn"), 5);
  TraceBuilder::In(b.Launch(4000, 1, 7, "ncclDevKernel_AllReduce_Sum_f32_RING_LL"), 5);
  b.End(5000, 1, 7, 5, 0, 3).graph_id = 12;
  b.Replay(10000, 1, 7, 12, 1000, 5000);
  AddHang(b, last_graph);
  return b.Build();
}

TEST(HangTest, NamesTheWaitAndTheCollectivesOfTheLastGraph) {
  const std::vector<Finding> findings = RunCheck(checks::NewHangCheck(), HungTrace(12));
  ASSERT_EQ(findings.size(), 1u);
  const Finding& f = findings[0];
  EXPECT_EQ(f.check_id, "hang");
  EXPECT_THAT(f.message, HasSubstr("waited 31.0 s in cudaStreamSynchronize, longer than --hang-timeout (30.0 s)"));
  EXPECT_THAT(f.message, HasSubstr("holds 2 NCCL collectives"));
  EXPECT_THAT(f.evidence[0], HasSubstr("graph 12 (3 nodes); NCCL kernels: ncclDevKernel_AllReduce_Sum_f32_RING_LL x2"));
  EXPECT_EQ(f.where.api, "cudaStreamSynchronize");
  ASSERT_NE(FirstUserFrame(f.where), nullptr);
  EXPECT_EQ(FirstUserFrame(f.where)->line, 88);
  // The hung end is the hang's, not a truncated trace's.
  EXPECT_THAT(RunCheck(checks::NewTraceIncompleteCheck(), HungTrace(12)), IsEmpty());
}

// One rank of a job with one GPU each launches NCCL kernels; a job of one rank launches none, but NCCL's own NVTX
// ranges still show the calls made while the graph was captured (the autograd thread's, in DDP's backward).
TEST(HangTest, NamesTheNcclCallsMadeDuringTheCapture) {
  TraceBuilder b;
  b.Begin(1000, 1, 7);
  TraceBuilder::In(b.Launch(2000, 1, 7, "ampere_sgemm_128x64_nn"), 5);
  for (uint64_t t : {2500, 3500}) {
    b.Push(t, 2, "ncclAllReduce", "NCCL");
    b.Pop(t + 50, 2, "NCCL");
  }
  b.End(5000, 1, 7, 5, 0, 1).graph_id = 12;
  b.Push(6000, 1, "ncclAllReduce", "NCCL");  // after the capture: eager, not the graph's
  b.Pop(6050, 1, "NCCL");
  b.Replay(10000, 1, 7, 12, 1000, 5000);
  AddHang(b, 12);
  const std::vector<Finding> findings = RunCheck(checks::NewHangCheck(), b.Build());
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_THAT(findings[0].message, HasSubstr("holds 2 NCCL collectives"));
  EXPECT_THAT(findings[0].evidence[0], HasSubstr("graph 12 (1 node); NCCL calls: ncclAllReduce x2"));
}

TEST(HangTest, AWaitOnEagerWorkSaysSo) {
  const std::vector<Finding> findings = RunCheck(checks::NewHangCheck(), HungTrace(0));
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_THAT(findings[0].message, ::testing::Not(HasSubstr("NCCL")));
  EXPECT_THAT(findings[0].evidence[0], HasSubstr("launched no CUDA graph"));
}

// Both ranks of the seeds' DDP recipe waited in destroy_process_group (two H100s): the whole-step graph that holds
// the all-reduces was still alive. The probe announced the wait and the graphs alive before it; the finding names the
// graph and where it was captured, and the fix is to delete it first.
TEST(HangTest, ATeardownWaitNamesTheLiveGraphsThatHoldCollectives) {
  TraceBuilder b;
  b.Probe(900, 1, trace::ProbeEventKind::kCaptureBegin, 0x7f00aa, trace::ProbeOrigin::kUser).stack =
      b.PythonStack({{"/home/me/train.py", 40, "main"}});
  b.Begin(1000, 1, 7);
  TraceBuilder::In(b.Launch(2000, 1, 7, "ncclDevKernel_AllReduce_Sum_f32_RING_LL"), 5);
  b.End(5000, 1, 7, 5, 0, 1).graph_id = 12;
  b.Probe(5100, 1, trace::ProbeEventKind::kCaptureEnd, 0x7f00aa);
  b.Replay(10000, 1, 7, 12, 1000, 5000);
  b.Probe(19000, 1, trace::ProbeEventKind::kGraphAlive, 0x7f00aa);
  trace::ProbeEvent& begin = b.Probe(20000, 1, trace::ProbeEventKind::kWaitBegin);
  begin.text = b.Intern("torch.distributed.destroy_process_group");
  AddHang(b, 12);
  b.trace().hangs.back().call = begin.text;
  b.trace().hangs.back().stream_id = 0;
  const std::vector<Finding> findings = RunCheck(checks::NewHangCheck(), b.Build());
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_THAT(findings[0].message, HasSubstr("waited 31.0 s in torch.distributed.destroy_process_group"));
  EXPECT_THAT(findings[0].message, HasSubstr("Still alive at the wait: 1 captured graph holding NCCL collectives;"));
  EXPECT_THAT(findings[0].evidence,
              ::testing::Contains(HasSubstr("still alive: graph 12 (captured at /home/me/train.py:40 in main)")));
  EXPECT_THAT(findings[0].fix, HasSubstr("before torch.distributed.destroy_process_group()"));
  // The live graph explains the wait; its all-reduce did pair up when it was replayed.
  EXPECT_THAT(findings[0].message, ::testing::Not(HasSubstr("another rank does not join")));
  EXPECT_EQ(FirstUserFrame(findings[0].where)->line, 88);
}

// Rank 1 skipped the barrier before the teardown (two H100s, probe_cases.py ddp-skip-barrier): rank 0's wait is the
// barrier's, not the all-reduce of the graph it replayed last, which paired up.
TEST(HangTest, ABarrierWaitNamesTheRanksThatDidNotJoin) {
  trace::Trace t = HungTrace(12);
  t.hangs.back().call = t.Intern("torch.distributed.barrier");
  const std::vector<Finding> findings = RunCheck(checks::NewHangCheck(), t);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_THAT(findings[0].message, HasSubstr("only when every rank of the group joins it"));
  EXPECT_THAT(findings[0].message, ::testing::Not(HasSubstr("The last graph it launched holds")));
}

// Ranks that captured different all-reduces, replaying in a loop: the GPU's queue fills behind the all-reduce that
// never completes and graph.replay() blocks in cudaGraphLaunch (two H100s, probe_cases.py ddp-divergent).
TEST(HangTest, AGraphLaunchBlockedBehindACollectiveIsNamed) {
  TraceBuilder b;
  b.Begin(1000, 1, 7);
  TraceBuilder::In(b.Launch(2000, 1, 7, "ncclDevKernel_AllReduce_Sum_f32_RING_LL"), 5);
  b.End(5000, 1, 7, 5, 0, 1).graph_id = 12;
  b.Replay(10000, 1, 7, 12, 1000, 5000);
  AddHang(b, 12);
  b.trace().hangs.back().call = b.Intern("cudaGraphLaunch");
  const std::vector<Finding> findings = RunCheck(checks::NewHangCheck(), b.Build());
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_THAT(findings[0].message, HasSubstr("in cudaGraphLaunch"));
  EXPECT_THAT(findings[0].message, HasSubstr("A graph launch blocks once the GPU's queue is full"));
  EXPECT_THAT(findings[0].message, HasSubstr("a collective that another rank does not join"));
}

TEST(HangTest, NoHangNoFinding) {
  TraceBuilder b;
  b.Call(1000, 1, "cudaStreamSynchronize", trace::ApiKind::kStreamSynchronize, 7);
  EXPECT_THAT(RunCheck(checks::NewHangCheck(), b.Build()), IsEmpty());
}

}  // namespace
}  // namespace graphcheck::testing_trace
