#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "checks/checks.h"
#include "tests/checks/trace/capture_test_util.h"

namespace graphcheck::testing_trace {
namespace {

using ::testing::HasSubstr;
using ::testing::SizeIs;

TEST(WarmupInsufficientTest, FlagsCublasWorkspaceAllocatedInCapture) {
  const trace::Trace trace = FailedCapture([](TraceBuilder& b) {
    const trace::BacktraceId bt =
        b.Backtrace({"cudaMalloc", "c10::cuda::CUDACachingAllocator::malloc", "at::cuda::getCUDABlasLtWorkspace()",
                     "at::native::addmm_out_cuda_impl", "at::_ops::addmm::call"});
    ApiCall& malloc = b.Call(3000, 1, "cudaMalloc", ApiKind::kMalloc);
    malloc.return_code = 900;
    malloc.backtrace = bt;
  });
  const std::vector<Finding> findings = RunCheck(checks::NewWarmupInsufficientCheck(), trace);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].message, HasSubstr("cuBLASLt workspace"));
  EXPECT_EQ(findings[0].where.torch_op, "aten::addmm");
  EXPECT_THAT(findings[0].consequences, ::testing::Contains(HasSubstr("cudaStreamEndCapture")));
}

// Seen on an H200 (torch 2.11, first conv inside a capture): cudnnCreate made a cudaFree and then a cudaMalloc, both
// refused. One handle initialised is one finding.
TEST(WarmupInsufficientTest, OneHandleInitialisedIsOneFindingWhateverCallsItMade) {
  const trace::Trace trace = FailedCapture([](TraceBuilder& b) {
    ApiCall& free = b.Call(3000, 1, "cudaFree", ApiKind::kFree);
    free.return_code = 900;
    free.backtrace = b.Backtrace({"libcudnn_graph.so.9+0x2b0233", "cudnnCreate", "at::native::getCudnnHandle()",
                                  "at::native::run_single_conv()"});
    ApiCall& malloc = b.Call(3100, 1, "cudaMalloc", ApiKind::kMalloc);
    malloc.return_code = 900;
    malloc.backtrace = b.Backtrace({"libcudnn_graph.so.9+0x2af95b", "cudnnCreate", "at::native::getCudnnHandle()",
                                    "at::native::run_single_conv()"});
  });
  const std::vector<Finding> findings = RunCheck(checks::NewWarmupInsufficientCheck(), trace);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].message, HasSubstr("cuDNN handle"));
}

TEST(WarmupInsufficientTest, FlagsLazyModuleLoadRefusedInCapture) {
  const trace::Trace trace = FailedCapture(
      [](TraceBuilder& b) { b.Call(3000, 1, "cuModuleLoadData", ApiKind::kModuleLoad).return_code = 900; });
  const std::vector<Finding> findings = RunCheck(checks::NewWarmupInsufficientCheck(), trace);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].severity, Severity::kError);  // CUDA refused it: the capture failed because of it
  EXPECT_THAT(findings[0].message, HasSubstr("module"));
}

// Seen on an H200 with torch 2.11: a clean capture lazily loads modules and grows the graph pool with cudaMalloc
// (PyTorch switches to relaxed mode around it). CUDA accepted both, so neither is a problem.
TEST(WarmupInsufficientTest, LazyLoadsCudaAcceptedInACleanCaptureAreClean) {
  TraceBuilder b;
  b.Begin(1000, 1, kStream);
  b.Call(1100, 1, "cuLibraryLoadData", ApiKind::kModuleLoad);
  b.Call(1200, 1, "cudaMalloc", ApiKind::kMalloc).backtrace =
      b.Backtrace({"cudaMalloc", "at::cuda::getCUDABlasLtWorkspace()"});
  b.End(2000, 1, kStream, kCaptureId, 0, 1);
  EXPECT_THAT(RunCheck(checks::NewWarmupInsufficientCheck(), b.Build()), SizeIs(0));
}

TEST(WarmupInsufficientTest, InitialisationDuringWarmupIsClean) {
  TraceBuilder b;
  b.Call(100, 1, "cuModuleLoadData", ApiKind::kModuleLoad);
  b.Call(200, 1, "cudaMalloc", ApiKind::kMalloc).backtrace = b.Backtrace({"cudaMalloc", "cublasCreate_v2"});
  b.Begin(1000, 1, kStream);
  b.End(2000, 1, kStream, kCaptureId, 0, 1);
  EXPECT_THAT(RunCheck(checks::NewWarmupInsufficientCheck(), b.Build()), SizeIs(0));
}

}  // namespace
}  // namespace graphcheck::testing_trace
