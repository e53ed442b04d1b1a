#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "analyzers/checks.h"
#include "tests/analyzers/capture_test_util.h"

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
  const std::vector<Finding> findings = RunCheck(analyzers::NewPageableMemcpyCheck(), trace);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].severity, Severity::kError);
  EXPECT_THAT(findings[0].message, HasSubstr("pageable"));
  EXPECT_THAT(RunCheck(analyzers::NewSyncInCaptureCheck(), trace), SizeIs(0));
}

TEST(PageableMemcpyTest, EagerPageableCopiesAreOneNotePerSite) {
  TraceBuilder b;
  for (int i = 0; i < 3; ++i) {
    ApiCall& copy = b.Call(1000 + i * 1000, 1, "cudaMemcpyAsync", ApiKind::kMemcpyAsync, kStream);
    copy.host_memory = trace::HostMemory::kPageable;
    copy.bytes = 4096;
  }
  const std::vector<Finding> findings = RunCheck(analyzers::NewPageableMemcpyCheck(), b.Build());
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].severity, Severity::kNote);
  EXPECT_THAT(findings[0].evidence[0], HasSubstr("3 such copies"));
}

TEST(PageableMemcpyTest, PinnedCopiesAreClean) {
  TraceBuilder b;
  b.Call(1000, 1, "cudaMemcpyAsync", ApiKind::kMemcpyAsync, kStream).host_memory = trace::HostMemory::kPinned;
  EXPECT_THAT(RunCheck(analyzers::NewPageableMemcpyCheck(), b.Build()), SizeIs(0));
}

}  // namespace
}  // namespace graphcheck::testing_trace
