// The check pipeline's input validation, which runs before any GPU work: a plan whose parts do not go together is
// InvalidArgument (exit 2) and a machine without CUDA is FailedPrecondition (exit 3).
#include "engine/pipeline.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/cuda.h>

namespace graphcheck {
namespace {

using ::testing::HasSubstr;

absl::Status RunWith(void (*edit)(CheckPlan*)) {
  CheckPlan plan;
  plan.model = "builtin:mlp";
  edit(&plan);
  return RunCheckPipeline(plan).status();
}

TEST(PipelineTest, BadOptionsAreInvalidArgument) {
  EXPECT_THAT(RunWith([](CheckPlan* p) { p->model = "builtin:resnet"; }).message(), HasSubstr("unknown built-in"));
  EXPECT_THAT(RunWith([](CheckPlan* p) { p->steps = 0; }).message(), HasSubstr("--replays"));
  EXPECT_THAT(RunWith([](CheckPlan* p) {
                p->scope = GraphScope::kFullIteration;
                p->train = false;
              }).message(),
              HasSubstr("needs --train"));
  EXPECT_THAT(RunWith([](CheckPlan* p) {
                p->vary = VariedDimension{"x", 0, {8}};
                p->scope = GraphScope::kFullIteration;
              }).message(),
              HasSubstr("needs --scope callables"));
  EXPECT_EQ(RunWith([](CheckPlan* p) { p->warmup = -1; }).code(), absl::StatusCode::kInvalidArgument);
}

TEST(PipelineTest, NoCudaIsFailedPrecondition) {
  if (torch::cuda::is_available()) GTEST_SKIP() << "this machine has CUDA";
  EXPECT_EQ(RunWith([](CheckPlan*) {}).code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace graphcheck
