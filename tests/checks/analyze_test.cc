#include "checks/analyze.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "cli/catalog.h"
#include "tests/checks/trace/capture_test_util.h"
#include "tests/checks/trace/launch_test_util.h"

namespace graphcheck::testing_trace {
namespace {

using ::testing::Contains;
using ::testing::Field;
using ::testing::HasSubstr;
using ::testing::Property;

trace::Trace Rank(int rank, uint32_t pid) {
  trace::Trace trace = LaunchBoundTrace(1000);
  trace.process.rank = rank;
  trace.process.pid = pid;
  trace.environment.Set("CUDA_LAUNCH_BLOCKING", "1");
  return trace;
}

// A distributed job: a problem every rank has is one finding naming the ranks, and metrics are the job's (the median
// over ranks, with the extremes named where ranks differ).
TEST(AnalyzeTest, MergesRanksIntoOneFindingAndJobMetrics) {
  std::vector<trace::Trace> ranks;
  for (int rank = 0; rank < 4; ++rank) ranks.push_back(Rank(rank, 10 + rank));
  ranks[3] = LaunchBoundTrace(3000);  // a slower rank
  ranks[3].process.rank = 3;
  ranks[3].process.pid = 13;
  ranks[3].environment.Set("CUDA_LAUNCH_BLOCKING", "1");
  std::vector<const trace::Trace*> pointers;
  for (const trace::Trace& t : ranks) pointers.push_back(&t);
  const checks::AnalysisResult result =
      checks::AnalyzeTraces(pointers, nullptr, BuiltinChecks(), CheckSelection(), CheckOptions());
  EXPECT_THAT(result.checks_run, Contains("env-launch-blocking"));
  EXPECT_THAT(result.checks_run, Contains("rank-divergent-capture"));
  int launch_blocking = 0;
  for (const Finding& f : result.findings) {
    if (f.check_id != "env-launch-blocking") continue;
    ++launch_blocking;
    EXPECT_EQ(f.where.ranks, (std::vector<int32_t>{0, 1, 2, 3}));
    EXPECT_FALSE(f.where.pid.has_value());
  }
  EXPECT_EQ(launch_blocking, 1);
  std::map<std::string, const Metric*> metrics;
  for (const Metric& m : result.metrics) metrics[m.ScopedName()] = &m;
  ASSERT_TRUE(metrics.count("launch.gpu_busy_us"));
  EXPECT_THAT(metrics["launch.gpu_busy_us"]->description, HasSubstr("median over 4 ranks"));
  ASSERT_TRUE(metrics.count("launch.gpu_busy_us.max"));  // rank 3's kernels run 3 us, the others' 1 us
  EXPECT_THAT(metrics["launch.gpu_busy_us.max"]->description, HasSubstr("(rank 3)"));
  EXPECT_FALSE(metrics.count("launch.kernels_per_iteration.max"));  // the same on every rank
  EXPECT_FALSE(metrics.count("rank0.launch.gpu_busy_us"));
}

// The ranks side by side: each with its process and its own values of the metrics that differ, none of the others.
TEST(AnalyzeTest, KeepsEachRanksValuesOfTheMetricsThatDiffer) {
  std::vector<trace::Trace> ranks;
  for (int rank = 0; rank < 3; ++rank) ranks.push_back(Rank(rank, 10 + rank));
  ranks[2] = LaunchBoundTrace(3000);  // a slower rank
  ranks[2].process.rank = 2;
  ranks[2].process.pid = 12;
  std::vector<const trace::Trace*> pointers;
  for (const trace::Trace& t : ranks) pointers.push_back(&t);
  const checks::AnalysisResult result =
      checks::AnalyzeTraces(pointers, nullptr, BuiltinChecks(), CheckSelection(), CheckOptions());
  ASSERT_EQ(result.ranks.size(), 3u);
  std::map<std::string, double> slow;
  for (const Metric& m : result.ranks[2].metrics) slow[m.ScopedName()] = m.value;
  EXPECT_EQ(result.ranks[2].rank, 2);
  EXPECT_EQ(result.ranks[2].pid, 12u);
  EXPECT_DOUBLE_EQ(slow["launch.gpu_busy_us"], 30);  // 10 kernels of 3 us, against 1 us on the others
  EXPECT_THAT(result.ranks[0].metrics, Contains(Field(&Metric::name, "launch.gpu_busy_us")));
  EXPECT_FALSE(slow.count("launch.kernels_per_iteration"));  // the same on every rank
}

// Processes that are not ranks (a program and the workers it forked): one finding with the others in its evidence,
// and each process's metrics under its pid.
TEST(AnalyzeTest, MergesUnrankedProcessesAndPrefixesTheirMetrics) {
  const trace::Trace a = Rank(-1, 10);
  const trace::Trace b = Rank(-1, 11);
  const checks::AnalysisResult result =
      checks::AnalyzeTraces({&a, &b}, nullptr, BuiltinChecks(), CheckSelection(), CheckOptions());
  int launch_blocking = 0;
  for (const Finding& f : result.findings) {
    if (f.check_id != "env-launch-blocking") continue;
    ++launch_blocking;
    EXPECT_EQ(f.where.pid, 10u);
    EXPECT_TRUE(f.where.ranks.empty());
    EXPECT_THAT(f.evidence, Contains("also in process 11"));
  }
  EXPECT_EQ(launch_blocking, 1);
  EXPECT_THAT(result.metrics, Contains(Property(&Metric::ScopedName, "pid10.launch.forecast_savings_ratio")));
  EXPECT_THAT(result.metrics, Contains(Property(&Metric::ScopedName, "pid11.launch.kernels_per_iteration")));
}

// Two findings of one process that happen to share a fingerprint are not merged with each other.
TEST(AnalyzeTest, NeverMergesTwoFindingsOfOneProcess) {
  trace::Trace trace = Rank(-1, 10);
  trace.integrity.end = trace::TraceEnd::kClean;
  trace.integrity.losses.push_back({trace::LossKind::kActivityDropped, 3, 0, 0});
  trace.integrity.losses.push_back({trace::LossKind::kWriterDropped, 5, 0, 0});
  const checks::AnalysisResult result = checks::AnalyzeTraces(
      {&trace}, nullptr, BuiltinChecks(), *CheckSelection::Parse("trace-incomplete"), CheckOptions());
  EXPECT_EQ(result.findings.size(), 2u);  // two kinds of loss: two warnings with one fingerprint
}

TEST(AnalyzeTest, FoldsStderrIntoTraceFindingsAndHonoursTheSelection) {
  const trace::Trace trace = FailedCapture([](TraceBuilder& b) {
    ApiCall& sync =
        TraceBuilder::In(b.Call(3000, 1, "cudaStreamSynchronize", ApiKind::kStreamSynchronize, kStream), kCaptureId);
    sync.return_code = 900;
  });
  const std::vector<std::string> lines = {"RuntimeError: CUDA error: operation not permitted when stream is capturing"};
  const checks::AnalysisResult result = checks::AnalyzeTraces(
      {&trace}, &lines, BuiltinChecks(), *CheckSelection::Parse("sync-in-capture,stderr-messages"), CheckOptions());
  ASSERT_EQ(result.findings.size(), 1u);
  EXPECT_EQ(result.findings[0].check_id, "sync-in-capture");
  EXPECT_EQ(result.findings[0].where.pid, 4242u);
  EXPECT_THAT(result.findings[0].evidence, Contains(HasSubstr("stderr line 1")));
  EXPECT_EQ(result.checks_run, (std::vector<std::string>{"stderr-messages", "sync-in-capture"}));
}

}  // namespace
}  // namespace graphcheck::testing_trace
