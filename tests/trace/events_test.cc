#include "trace/events.h"

#include <gtest/gtest.h>

#include "tests/trace/trace_test_events.h"

namespace graphcheck::trace {
namespace {

// The in-memory sizes that keep `graphcheck analyze` under 2x the trace file (bench/analysis_memory.sh).
TEST(EventsTest, CallsAndKernelsAreCompactInMemory) {
  EXPECT_EQ(sizeof(ApiCall), 40u);
  EXPECT_EQ(sizeof(KernelActivity), 32u);
}

TEST(EventsTest, CallsSharingEverythingButTimesShareOneDetail) {
  Trace trace;
  const StringId api = trace.Intern("cudaLaunchKernel");
  const StringId kernel = trace.Intern("gemm");
  for (uint64_t i = 0; i < 1000; ++i) trace.AddCall(testing::LaunchCall(i, api, kernel));
  ApiCallRecord failed = testing::LaunchCall(1000, api, kernel);
  failed.return_code = 700;
  trace.AddCall(failed);
  ASSERT_EQ(trace.api_calls.size(), 1001u);
  EXPECT_EQ(trace.call_details.size(), 2u);
  EXPECT_EQ(trace.Detail(trace.api_calls[0]).kernel_name, kernel);
  EXPECT_EQ(trace.Detail(trace.api_calls[1000]).return_code, 700);
  EXPECT_EQ(trace.api_calls[999].correlation_id, 1999u);
}

TEST(EventsTest, RecordGivesBackWhatWasAdded) {
  Trace trace;
  const ApiCallRecord full = testing::FullApiCall();
  trace.AddCall(full);
  EXPECT_EQ(testing::Fields(trace.Record(trace.api_calls[0])), testing::Fields(full));
  const KernelRecord kernel = testing::KernelRun(3, trace.Intern("gemm"));
  trace.AddKernel(kernel);
  trace.AddKernel(testing::KernelRun(4, trace.Intern("gemm")));
  EXPECT_EQ(testing::Fields(trace.Record(trace.kernels[0])), testing::Fields(kernel));
  EXPECT_EQ(trace.kernel_shapes.size(), 1u) << "two runs of one launch site share a shape";
}

TEST(EventsTest, BacktraceFramesAreTextInnermostFirst) {
  Trace trace;
  trace.backtraces.push_back({{trace.Intern("cudaStreamSynchronize"), trace.Intern("at::native::item")}});
  EXPECT_EQ(trace.BacktraceFrames(1), (std::vector<std::string>{"cudaStreamSynchronize", "at::native::item"}));
  EXPECT_TRUE(trace.BacktraceFrames(0).empty());
  EXPECT_TRUE(trace.BacktraceFrames(2).empty());
}

}  // namespace
}  // namespace graphcheck::trace
