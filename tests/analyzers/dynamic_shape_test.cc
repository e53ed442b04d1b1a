#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "analyzers/checks.h"
#include "tests/analyzers/trace_builder.h"

namespace graphcheck::testing_trace {
namespace {

using ::testing::HasSubstr;
using ::testing::SizeIs;

trace::Trace Steps(uint32_t odd_grid) {
  TraceBuilder b;
  for (int s = 0; s < 6; ++s) {
    EagerSteps(&b, 1000000 + s * 100000, 1, 100000, {{"embed", 1}, {"gemm", s == 4 ? odd_grid : 16}, {"softmax", 4}});
  }
  return b.Build();
}

TEST(DynamicShapeTest, PointsAtTheLaunchWhoseGridChanged) {
  const trace::Trace trace = Steps(24);
  const std::vector<Finding> findings = RunCheck(analyzers::NewDynamicShapeCheck(), trace);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].where.api, "cudaLaunchKernel");
  EXPECT_THAT(findings[0].message, HasSubstr("gemm grid (24,1,1)"));
  EXPECT_THAT(findings[0].message, HasSubstr("gemm grid (16,1,1)"));
  EXPECT_THAT(RunCheck(analyzers::NewDynamicControlFlowCheck(), trace), SizeIs(0));
}

TEST(DynamicShapeTest, StaticShapesAreClean) {
  EXPECT_THAT(RunCheck(analyzers::NewDynamicShapeCheck(), Steps(16)), SizeIs(0));
}

}  // namespace
}  // namespace graphcheck::testing_trace
