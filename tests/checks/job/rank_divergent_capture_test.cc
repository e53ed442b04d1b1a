// rank-divergent-capture on small jobs built in memory: every rank captures the same graph but one.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "checks/analyze.h"
#include "cli/catalog.h"
#include "tests/checks/trace/capture_test_util.h"

namespace graphcheck::testing_trace {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

// A rank that captures `launches` kernels on stream 7 and ends with `end_rc` (0: a graph of `launches` nodes).
trace::Trace RankCapturing(int rank, int launches, int32_t end_rc = 0, int world_size = 4) {
  TraceBuilder b;
  b.trace().process.rank = rank;
  b.trace().process.world_size = world_size;
  b.trace().process.pid = 100 + rank;
  b.Begin(1000, 1, kStream);
  for (int k = 0; k < launches; ++k) {
    TraceBuilder::In(b.Launch(2000 + k * 100, 1, kStream, k == 0 ? "ncclDevKernel_AllReduce" : "gemm"), kCaptureId);
  }
  b.End(9000, 1, kStream, kCaptureId, end_rc, launches);
  return b.Build();
}

std::vector<Finding> Divergence(const std::vector<trace::Trace>& job) {
  std::vector<const trace::Trace*> pointers;
  for (const trace::Trace& t : job) pointers.push_back(&t);
  return checks::AnalyzeTraces(pointers, nullptr, BuiltinChecks(), *CheckSelection::Parse("rank-divergent-capture"),
                               CheckOptions())
      .findings;
}

TEST(RankDivergentCaptureTest, NamesTheRankWhoseGraphDiffers) {
  std::vector<trace::Trace> job;
  for (int rank = 0; rank < 4; ++rank) job.push_back(RankCapturing(rank, rank == 2 ? 3 : 2));
  const std::vector<Finding> findings = Divergence(job);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].severity, Severity::kError);
  EXPECT_EQ(findings[0].where.ranks, (std::vector<int32_t>{2}));
  EXPECT_EQ(findings[0].where.api, "cudaStreamBeginCapture");
  EXPECT_THAT(findings[0].message, HasSubstr("rank 2 of 4 capture 1 holds 3 nodes where the others' hold 2 "
                                             "(ranks 0-1,3)"));
}

// The same graph on every rank, but rank 1 issued one all-reduce fewer while capturing (NCCL's NVTX ranges, from the
// autograd thread): its collectives will not pair up with the others'.
TEST(RankDivergentCaptureTest, NamesTheRankThatIssuedOtherNcclCalls) {
  std::vector<trace::Trace> job;
  for (int rank = 0; rank < 4; ++rank) {
    trace::Trace t = RankCapturing(rank, 2);
    const int calls = rank == 1 ? 2 : 3;
    for (int c = 0; c < calls; ++c) {
      trace::NvtxEvent push;
      push.kind = trace::NvtxEvent::Kind::kPush;
      push.thread_id = 2;
      push.time_ns = 3000 + c * 1000;
      push.domain = t.Intern("NCCL");
      push.message = t.Intern("ncclAllReduce");
      trace::NvtxEvent pop = push;
      pop.kind = trace::NvtxEvent::Kind::kPop;
      pop.time_ns += 100;
      pop.message = 0;
      t.nvtx.push_back(push);
      t.nvtx.push_back(pop);
    }
    job.push_back(std::move(t));
  }
  const std::vector<Finding> findings = Divergence(job);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].where.ranks, (std::vector<int32_t>{1}));
  EXPECT_THAT(findings[0].message, HasSubstr("rank 1 of 4 capture 1 issued ncclAllReduce x2 where the others' issued "
                                             "ncclAllReduce x3 (ranks 0,2-3)"));
}

TEST(RankDivergentCaptureTest, NamesTheRanksWhoseCaptureFailed) {
  std::vector<trace::Trace> job;
  for (int rank = 0; rank < 4; ++rank) job.push_back(RankCapturing(rank, 2, rank >= 2 ? 901 : 0));
  job.push_back(RankCapturing(4, 2, 0, 4));  // a fifth "rank" of the same world size tips the majority
  const std::vector<Finding> findings = Divergence(job);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].where.ranks, (std::vector<int32_t>{2, 3}));
  EXPECT_THAT(findings[0].message, HasSubstr("capture 1 failed (no graph) where the others made one"));
}

TEST(RankDivergentCaptureTest, NamesARankWithFewerCaptures) {
  std::vector<trace::Trace> job;
  for (int rank = 0; rank < 3; ++rank) job.push_back(RankCapturing(rank, 2));
  TraceBuilder none;
  none.trace().process.rank = 3;
  none.trace().process.world_size = 4;
  none.Launch(1000, 1, kStream, "gemm");
  job.push_back(none.Build());
  const std::vector<Finding> findings = Divergence(job);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].where.ranks, (std::vector<int32_t>{3}));
  EXPECT_THAT(findings[0].message, HasSubstr("made 0 captures where the others made 1"));
}

TEST(RankDivergentCaptureTest, RanksThatCaptureTheSameAreClean) {
  std::vector<trace::Trace> job;
  for (int rank = 0; rank < 4; ++rank) job.push_back(RankCapturing(rank, 2));
  EXPECT_THAT(Divergence(job), IsEmpty());
}

// A pipeline-parallel Megatron job: each rank's capture begun by CudaGraphManager for its own layers. Ranks of
// different stages capture different graphs by design; two ranks of one stage must still agree.
TEST(RankDivergentCaptureTest, PipelineStagesAreComparedOnlyWithinAStage) {
  auto stage_rank = [](int rank, int launches, uint64_t layer) {
    trace::Trace t = RankCapturing(rank, launches);
    trace::ProbeEvent begin;
    begin.kind = trace::ProbeEventKind::kCaptureBegin;
    begin.origin = trace::ProbeOrigin::kMegatron;
    begin.thread_id = 1;
    begin.time_ns = 900;
    begin.graph = 77;
    begin.value = layer;
    t.probe_events.push_back(begin);
    return t;
  };
  // Ranks 0 and 2 hold layer 1, ranks 1 and 3 layer 2 (a forward of 2 kernels, a backward of 3).
  std::vector<trace::Trace> stages = {stage_rank(0, 2, 1), stage_rank(1, 3, 2), stage_rank(2, 2, 1),
                                      stage_rank(3, 3, 2)};
  EXPECT_THAT(Divergence(stages), IsEmpty());
  stages[2] = stage_rank(2, 4, 1);  // rank 2 captured more than rank 0, its stage's other rank
  const std::vector<Finding> findings = Divergence(stages);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].message, HasSubstr("capture 1 holds 4 nodes where the others' hold 2 (rank 0)"));
}

TEST(RankDivergentCaptureTest, ProcessesWithoutRanksAreNotAJob) {
  std::vector<trace::Trace> job = {RankCapturing(-1, 2), RankCapturing(-1, 3)};
  EXPECT_THAT(Divergence(job), IsEmpty());
}

}  // namespace
}  // namespace graphcheck::testing_trace
