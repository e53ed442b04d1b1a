#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "checks/checks.h"
#include "tests/checks/trace/capture_test_util.h"

namespace graphcheck::testing_trace {
namespace {

using ::testing::HasSubstr;
using ::testing::SizeIs;

TEST(PageableMemcpyTest, FlagsPageableCopyInCaptureAsError) {
  const trace::Trace trace = FailedCapture([](TraceBuilder& b) {
    ApiCall& copy = TraceBuilder::In(b.Call(3000, 1, "cudaMemcpyAsync", ApiKind::kMemcpyAsync, kStream), kCaptureId);
    copy.host_memory = trace::HostMemory::kPageable;
    copy.direction = trace::MemcpyDirection::kHostToDevice;
    copy.return_code = 900;
  });
  const std::vector<Finding> findings = RunCheck(checks::NewPageableMemcpyCheck(), trace);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].severity, Severity::kError);
  EXPECT_THAT(findings[0].message, HasSubstr("pageable"));
  EXPECT_THAT(RunCheck(checks::NewSyncInCaptureCheck(), trace), SizeIs(0));
}

// Steps marked "step" every 10 us; a pageable copy at start-up (loading weights) and one in every step.
trace::Trace StepsWithPageableCopies() {
  TraceBuilder b;
  ApiCall& load = b.Call(500, 1, "cudaMemcpyAsync", ApiKind::kMemcpyAsync, kStream);
  load.host_memory = trace::HostMemory::kPageable;
  load.bytes = 1 << 20;
  for (int i = 0; i < 4; ++i) {
    b.Push(10000 * (i + 1), 1, "step");
    ApiCall& copy = b.Call(10000 * (i + 1) + 1000, 1, "cudaMemcpyAsync", ApiKind::kMemcpyAsync, kStream);
    copy.host_memory = trace::HostMemory::kPageable;
    copy.bytes = 4096;
    b.Pop(10000 * (i + 1) + 9000, 1);
  }
  return b.Build();
}

TEST(PageableMemcpyTest, EagerPageableCopiesInTheStepsAreOneNotePerSite) {
  const std::vector<Finding> findings = RunCheck(checks::NewPageableMemcpyCheck(), StepsWithPageableCopies());
  ASSERT_THAT(findings, SizeIs(1));  // the start-up copy is not in a step
  EXPECT_EQ(findings[0].severity, Severity::kNote);
  EXPECT_THAT(findings[0].evidence[0], HasSubstr("3 such copies from this call site in 3 of 3 steps, 4096 bytes"));
}

TEST(PageableMemcpyTest, StartUpCopiesOutsideTheStepsAreNotReported) {
  TraceBuilder b;
  for (int i = 0; i < 3; ++i) {
    ApiCall& copy = b.Call(1000 + i * 1000, 1, "cudaMemcpyAsync", ApiKind::kMemcpyAsync, kStream);
    copy.host_memory = trace::HostMemory::kPageable;
  }
  EXPECT_THAT(RunCheck(checks::NewPageableMemcpyCheck(), b.Build()), SizeIs(0));
}

TEST(PageableMemcpyTest, PinnedCopiesAreClean) {
  TraceBuilder b;
  b.Call(1000, 1, "cudaMemcpyAsync", ApiKind::kMemcpyAsync, kStream).host_memory = trace::HostMemory::kPinned;
  EXPECT_THAT(RunCheck(checks::NewPageableMemcpyCheck(), b.Build()), SizeIs(0));
}

}  // namespace
}  // namespace graphcheck::testing_trace
