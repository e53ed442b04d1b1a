// The check pipeline's input validation, which runs before any GPU work: bad options are InvalidArgument (exit 2)
// and a machine without CUDA is FailedPrecondition (exit 3).
#include "capture/engine/pipeline.h"

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
  EXPECT_THAT(RunWith([](CheckPlan* p) { p->optimizer = "lamb"; }).message(), HasSubstr("unknown optimizer"));
  EXPECT_THAT(RunWith([](CheckPlan* p) { p->scope = "moe"; }).message(), HasSubstr("unknown --scope"));
  EXPECT_THAT(RunWith([](CheckPlan* p) { p->amp = "fp8"; }).message(), HasSubstr("unknown --amp"));
  EXPECT_THAT(RunWith([](CheckPlan* p) { p->steps = 0; }).message(), HasSubstr("--replays"));
  EXPECT_THAT(RunWith([](CheckPlan* p) {
                p->scope = "full-iteration";
                p->train = false;
              }).message(),
              HasSubstr("needs --train"));
  EXPECT_EQ(RunWith([](CheckPlan* p) { p->optimizer = "lamb"; }).code(), absl::StatusCode::kInvalidArgument);
}

TEST(PipelineTest, NoCudaIsFailedPrecondition) {
  if (torch::cuda::is_available()) GTEST_SKIP() << "this machine has CUDA";
  EXPECT_EQ(RunWith([](CheckPlan*) {}).code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace graphcheck
