// The Python probe's exceptions as findings (checks/trace/probe_findings.h): a caught exception in a capture is its
// check's finding at the program's line, one no rule knows is capture-error's, one after a CUDA root cause is that
// cause's evidence, and a thread dying of CUDA's text for an explained failure is no finding of its own.
#include "checks/trace/probe_findings.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "analysis/trace_analysis.h"
#include "checks/checks.h"
#include "tests/checks/trace/probe_test_util.h"

namespace graphcheck::testing_trace {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;
using trace::ProbeEventKind;
using trace::ProbeOrigin;

TEST(ProbeFindingsTest, ACaughtExceptionInCaptureIsAFindingOfItsCheckAtTheProgramsLine) {
  const trace::Trace trace = CaughtExceptionInCapture(kPageable);
  const std::vector<Finding> findings = RunCheck(checks::NewPageableMemcpyCheck(), trace);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].check_id, "pageable-memcpy");
  EXPECT_EQ(findings[0].severity, Severity::kError);
  EXPECT_THAT(findings[0].message, HasSubstr("RuntimeError: Cannot copy between CPU and CUDA tensors"));
  EXPECT_THAT(findings[0].message, HasSubstr("begun by the program"));
  ASSERT_THAT(findings[0].where.python, SizeIs(3));
  EXPECT_FALSE(findings[0].where.python[0].user);
  EXPECT_TRUE(findings[0].where.python[1].user);
  EXPECT_THAT(findings[0].evidence, Contains("RuntimeError raised at /home/me/train.py:27 in body"));
  EXPECT_THAT(findings[0].fix, HasSubstr("pin"));
  // The empty graph it left is the exception's doing, not a stream mistake: no empty-graph, no capture-error.
  EXPECT_THAT(RunCheck(checks::NewEmptyGraphCheck(), trace), IsEmpty());
  EXPECT_THAT(RunCheck(checks::NewCaptureErrorCheck(), trace), IsEmpty());
}

TEST(ProbeFindingsTest, AnExceptionNoRuleKnowsIsACaptureError) {
  const trace::Trace trace = CaughtExceptionInCapture("shapes do not match: 3 vs 4");
  const std::vector<Finding> findings = RunCheck(checks::NewCaptureErrorCheck(), trace);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].message, HasSubstr("the capture failed in Python, before any CUDA call did"));
  EXPECT_TRUE(findings[0].where.python[1].user);
}

// .item() inside torch.cuda.graph: CUDA refuses the synchronization (the trace's root cause) and PyTorch raises. The
// exception is evidence on the sync-in-capture finding, and the capture_end error it led to is not a second finding.
TEST(ProbeFindingsTest, AnExceptionAfterACudaRootCauseIsItsEvidence) {
  TraceBuilder b;
  const trace::PythonStackId stack = TrainPyStack(b, 42);
  b.Probe(900, 1, ProbeEventKind::kCaptureBegin, kGraph, ProbeOrigin::kUser);
  b.Begin(1000, 1, kStream);
  ApiCall& sync =
      TraceBuilder::In(b.Call(3000, 1, "cudaStreamSynchronize", ApiKind::kStreamSynchronize, kStream), kCaptureId);
  sync.return_code = 900;
  b.Exception(3500, 1, ProbeEventKind::kCaptureException, kGraph, "torch.AcceleratorError",
              "CUDA error: operation not permitted when stream is capturing", stack);
  b.End(5000, 1, kStream, kCaptureId, 901, 0);
  b.Exception(5500, 1, ProbeEventKind::kCaptureException, kGraph, "torch.AcceleratorError",
              "CUDA error: operation failed due to a previous error during capture", stack);
  const trace::Trace trace = b.Build();
  const std::vector<Finding> syncs = RunCheck(checks::NewSyncInCaptureCheck(), trace);
  ASSERT_THAT(syncs, SizeIs(1));
  EXPECT_THAT(syncs[0].evidence, Contains(HasSubstr("the program saw torch.AcceleratorError: CUDA error: operation "
                                                    "not permitted when stream is capturing (raised at "
                                                    "/home/me/train.py:42 in body)")));
  EXPECT_THAT(RunCheck(checks::NewCaptureErrorCheck(), trace), IsEmpty());
}

// capture_begin refused before CUDA's capture began: there is no window, and the finding still names the line.
TEST(ProbeFindingsTest, AnExceptionFromCaptureBeginHasNoWindow) {
  TraceBuilder b;
  b.Probe(900, 1, ProbeEventKind::kCaptureBegin, kGraph, ProbeOrigin::kUser);
  b.Exception(950, 1, ProbeEventKind::kCaptureException, kGraph, "RuntimeError",
              "CUDA graphs must be captured on a non-default stream. (However, after capture, it's ok to replay them "
              "on the default stream.)",
              TrainPyStack(b, 12));
  const std::vector<Finding> findings = RunCheck(checks::NewLegacyStreamInCaptureCheck(), b.Build());
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].message, HasSubstr("a capture whose CUDA capture never began"));
}

// A thread that queried an event during a global-mode capture dies of CUDA's 900 text: the trace's
// unsafe-api-in-capture finding is its root cause, not a second (sync-in-capture) finding.
TEST(ProbeFindingsTest, AThreadDyingOfCudasTextForAnExplainedFailureIsNotAFinding) {
  TraceBuilder b;
  b.Begin(1000, 1, kStream);
  ApiCall& query = b.Call(2000, 2, "cudaEventQuery", ApiKind::kEventQuery);
  query.return_code = 900;
  b.End(3000, 1, kStream, kCaptureId, 901, 0);
  b.Exception(2500, 2, ProbeEventKind::kUncaughtException, 0, "torch.AcceleratorError",
              "CUDA error: operation not permitted when stream is capturing",
              b.PythonStack({{"/home/me/train.py", 8, "watch"}}));
  const trace::Trace trace = b.Build();
  ASSERT_THAT(RunCheck(checks::NewUnsafeApiInCaptureCheck(), trace), SizeIs(1));
  EXPECT_THAT(RunCheck(checks::NewSyncInCaptureCheck(), trace), IsEmpty());
}

TEST(ProbeFindingsTest, AnUncaughtExceptionNoRuleKnowsIsNotAFinding) {
  TraceBuilder b;
  b.Exception(2000, 1, ProbeEventKind::kUncaughtException, 0, "KeyError", "'lr'",
              b.PythonStack({{"/home/me/train.py", 5, "<module>"}}));
  const trace::Trace trace = b.Build();
  const analysis::TraceAnalysis analysis(trace);
  ASSERT_THAT(analysis.probe().exceptions(), SizeIs(1));
  EXPECT_FALSE(analysis.probe().exceptions()[0].reported);
}

}  // namespace
}  // namespace graphcheck::testing_trace
