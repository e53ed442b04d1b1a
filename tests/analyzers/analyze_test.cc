#include "analyzers/analyze.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cli/catalog.h"
#include "tests/analyzers/capture_test_util.h"
#include "tests/analyzers/launch_test_util.h"

namespace graphcheck::testing_trace {
namespace {

using ::testing::Contains;
using ::testing::Field;
using ::testing::HasSubstr;

trace::Trace Rank(int rank, uint32_t pid) {
  trace::Trace trace = LaunchBoundTrace(1000);
  trace.process.rank = rank;
  trace.process.pid = pid;
  trace.environment.Set("CUDA_LAUNCH_BLOCKING", "1");
  return trace;
}

TEST(AnalyzeTest, MergesProcessesAndPrefixesTheirMetrics) {
  const trace::Trace a = Rank(0, 10);
  const trace::Trace b = Rank(1, 11);
  const analyzers::AnalysisResult result =
      analyzers::AnalyzeTraces({&a, &b}, nullptr, BuiltinChecks(), CheckSelection(), CheckOptions());
  EXPECT_THAT(result.checks_run, Contains("env-launch-blocking"));
  EXPECT_THAT(result.checks_run, Contains("sync-in-capture"));
  // The environment finding is the same on both ranks: kept once, naming the other process.
  int launch_blocking = 0;
  for (const Finding& f : result.findings) {
    if (f.check_id != "env-launch-blocking") continue;
    ++launch_blocking;
    EXPECT_EQ(f.where.pid, 10u);
    EXPECT_THAT(f.evidence, Contains("also in process 11"));
  }
  EXPECT_EQ(launch_blocking, 1);
  EXPECT_THAT(result.findings, Contains(Field(&Finding::check_id, "launch-bound")));
  EXPECT_THAT(result.metrics, Contains(Field(&Metric::name, "rank0.launch.forecast_savings_ratio")));
  EXPECT_THAT(result.metrics, Contains(Field(&Metric::name, "rank1.launch.kernels_per_iteration")));
}

TEST(AnalyzeTest, FoldsStderrIntoTraceFindingsAndHonoursTheSelection) {
  const trace::Trace trace = FailedCapture([](TraceBuilder& b) {
    ApiCall& sync =
        TraceBuilder::In(b.Call(3000, 1, "cudaStreamSynchronize", ApiKind::kStreamSynchronize, kStream), kCaptureId);
    sync.return_code = 900;
  });
  const std::vector<std::string> lines = {"RuntimeError: CUDA error: operation not permitted when stream is capturing"};
  const analyzers::AnalysisResult result = analyzers::AnalyzeTraces(
      {&trace}, &lines, BuiltinChecks(), *CheckSelection::Parse("sync-in-capture,stderr-messages"), CheckOptions());
  ASSERT_EQ(result.findings.size(), 1u);
  EXPECT_EQ(result.findings[0].check_id, "sync-in-capture");
  EXPECT_EQ(result.findings[0].where.pid, 4242u);
  EXPECT_THAT(result.findings[0].evidence, Contains(HasSubstr("stderr line 1")));
  EXPECT_EQ(result.checks_run, (std::vector<std::string>{"stderr-messages", "sync-in-capture"}));
}

}  // namespace
}  // namespace graphcheck::testing_trace
