#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "checks/checks.h"
#include "tests/checks/trace/capture_test_util.h"

namespace graphcheck::testing_trace {
namespace {

using ::testing::HasSubstr;
using ::testing::SizeIs;

TEST(AllocInCaptureTest, FlagsMallocOnTheCapturingThread) {
  const trace::Trace trace = FailedCapture([](TraceBuilder& b) {
    ApiCall& malloc = b.Call(3000, 1, "cudaMalloc", ApiKind::kMalloc);
    malloc.return_code = 900;
    malloc.bytes = 1 << 20;
  });
  const std::vector<Finding> findings = RunCheck(checks::NewAllocInCaptureCheck(), trace);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].where.api, "cudaMalloc");
  EXPECT_EQ(findings[0].severity, Severity::kError);
  EXPECT_THAT(findings[0].message, HasSubstr("1048576 bytes"));
  EXPECT_THAT(findings[0].consequences, ::testing::Contains(HasSubstr("901")));
}

TEST(AllocInCaptureTest, LibraryInitialisationIsWarmupInsufficientNotAlloc) {
  const trace::Trace trace = FailedCapture([](TraceBuilder& b) {
    const trace::BacktraceId bt =
        b.Backtrace({"cudaMalloc", "cublasCreate_v2", "at::cuda::getCurrentCUDABlasHandle()"});
    ApiCall& malloc = b.Call(3000, 1, "cudaMalloc", ApiKind::kMalloc);
    malloc.return_code = 900;
    malloc.backtrace = bt;
  });
  EXPECT_THAT(RunCheck(checks::NewAllocInCaptureCheck(), trace), SizeIs(0));
}

TEST(AllocInCaptureTest, RelaxedModeAllowsAllocation) {
  const trace::Trace trace =
      FailedCapture([](TraceBuilder& b) { b.Call(3000, 1, "cudaMalloc", ApiKind::kMalloc); }, 0, CaptureMode::kRelaxed);
  EXPECT_THAT(RunCheck(checks::NewAllocInCaptureCheck(), trace), SizeIs(0));
}

TEST(AllocInCaptureTest, AllocationOutsideCaptureIsClean) {
  TraceBuilder b;
  b.Call(100, 1, "cudaMalloc", ApiKind::kMalloc);
  b.Begin(1000, 1, kStream);
  b.End(2000, 1, kStream, kCaptureId, 0, 1);
  b.Call(3000, 1, "cudaFree", ApiKind::kFree);
  EXPECT_THAT(RunCheck(checks::NewAllocInCaptureCheck(), b.Build()), SizeIs(0));
}

}  // namespace
}  // namespace graphcheck::testing_trace
