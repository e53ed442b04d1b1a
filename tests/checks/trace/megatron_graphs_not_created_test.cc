// megatron-graphs-not-created: a layer graph CudaGraphManager recorded with no capture of CudaGraphManager's in the
// trace is reported at the call that ran the layer; graphs that were created, and programs without Megatron's
// per-layer graphs, are not.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "checks/checks.h"
#include "tests/checks/trace/probe_test_util.h"

namespace graphcheck::testing_trace {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

void Recorded(TraceBuilder& b) {
  trace::ProbeEvent& e = b.Probe(500, 1, ProbeEventKind::kMegatronGraphRecorded, 0);
  e.value = 1;
  e.stack = TrainPyStack(b, 31);
}

TEST(MegatronGraphsNotCreatedTest, RecordedButNeverCapturedIsReportedAtTheLayersCall) {
  TraceBuilder b;
  Recorded(b);
  b.Launch(1000, 1, kStream, "gemm");
  const std::vector<Finding> findings = RunCheck(checks::NewMegatronGraphsNotCreatedCheck(), b.Build());
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].check_id, "megatron-graphs-not-created");
  EXPECT_EQ(findings[0].severity, Severity::kWarning);
  EXPECT_THAT(findings[0].message, HasSubstr("every layer ran eagerly"));
  EXPECT_EQ(FirstUserFrame(findings[0].where)->line, 31u);
  EXPECT_THAT(findings[0].evidence[0], HasSubstr("layer 1"));
  EXPECT_THAT(findings[0].fix, HasSubstr("create_cudagraphs()"));
}

TEST(MegatronGraphsNotCreatedTest, CreatedGraphsAndOtherProgramsAreNotReported) {
  TraceBuilder created;
  Recorded(created);
  created.Probe(2000, 1, ProbeEventKind::kCaptureBegin, kGraph, ProbeOrigin::kMegatron).value = 1;
  EXPECT_THAT(RunCheck(checks::NewMegatronGraphsNotCreatedCheck(), created.Build()), IsEmpty());
  TraceBuilder other;
  other.Probe(2000, 1, ProbeEventKind::kCaptureBegin, kGraph, ProbeOrigin::kUser);
  EXPECT_THAT(RunCheck(checks::NewMegatronGraphsNotCreatedCheck(), other.Build()), IsEmpty());
}

}  // namespace
}  // namespace graphcheck::testing_trace
