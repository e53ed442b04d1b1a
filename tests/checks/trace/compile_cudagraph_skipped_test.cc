// compile-cudagraph-skipped: inductor's reasons for running a compiled function without CUDA graphs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "checks/checks.h"
#include "tests/checks/trace/probe_test_util.h"

namespace graphcheck::testing_trace {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

TEST(CompileCudagraphSkippedTest, CompileSkipReasonsAreOneFindingPerReasonAndSite) {
  TraceBuilder b;
  const trace::PythonStackId site = b.PythonStack(
      {{"/usr/lib/python3/dist-packages/torch/_inductor/x.py", 1, "f"}, {"/home/me/infer.py", 18, "main"}});
  for (int i = 0; i < 3; ++i) {
    trace::ProbeEvent& skip = b.Probe(1000 + i, 1, ProbeEventKind::kCompileSkip);
    skip.text = b.trace().Intern("skipping cudagraphs due to mutated inputs (1 instances)");
    skip.stack = site;
  }
  trace::ProbeEvent& cpu = b.Probe(2000, 1, ProbeEventKind::kCompileSkip);
  cpu.text = b.trace().Intern("skipping cudagraphs due to cpu device (arg1_1)");
  cpu.stack = site;
  const std::vector<Finding> findings = RunCheck(checks::NewCompileCudagraphSkippedCheck(), b.Build());
  ASSERT_THAT(findings, SizeIs(2));
  EXPECT_THAT(findings[0].message, HasSubstr("the function called at /home/me/infer.py:18 without CUDA graphs: "
                                             "\"skipping cudagraphs due to mutated inputs (1 instances)\""));
  EXPECT_THAT(findings[0].evidence, Contains("reported 3 times"));
  EXPECT_THAT(findings[0].fix, HasSubstr("mutate"));
  EXPECT_THAT(findings[1].fix, HasSubstr("GPU"));
}

TEST(CompileCudagraphSkippedTest, ATraceWithoutSkipsIsClean) {
  TraceBuilder b;
  b.Probe(900, 1, ProbeEventKind::kCaptureBegin, kGraph, ProbeOrigin::kCudagraphTrees);
  b.Begin(1000, 1, kStream, CaptureMode::kThreadLocal);
  TraceBuilder::In(b.Launch(1100, 1, kStream, "triton_poi_fused"), kCaptureId, CaptureMode::kThreadLocal);
  b.End(1200, 1, kStream, kCaptureId, 0, 1);
  EXPECT_THAT(RunCheck(checks::NewCompileCudagraphSkippedCheck(), b.Build()), IsEmpty());
}

}  // namespace
}  // namespace graphcheck::testing_trace
