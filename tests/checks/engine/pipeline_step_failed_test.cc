#include "checks/checks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/run/engine_run.h"

namespace graphcheck::checks {
namespace {

using ::testing::HasSubstr;

std::vector<Finding> RunOn(const EngineRun& run) {
  const std::unique_ptr<Check> check = NewPipelineStepFailedCheck();
  CheckInputs inputs;
  inputs.Add(run);
  std::vector<Finding> findings;
  check->Run(inputs, BoundOptions(check->info(), CheckOptions()), &findings);
  return findings;
}

TEST(PipelineStepFailedTest, FlagsTheFailedStep) {
  EngineRun run;
  run.model = "builtin:defect/item-in-forward";
  run.steps = {Step{"eager-reference", StepStatus::kOk, 10, ""},
               Step{"forward-capture", StepStatus::kFailed, 3,
                    "forward capture of 'x': CUDA error: operation not permitted when stream is capturing"},
               Step{"replay", StepStatus::kSkipped, 0, "not run: forward-capture failed"}};
  const std::vector<Finding> findings = RunOn(run);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].check_id, "pipeline-step-failed");
  EXPECT_EQ(findings[0].severity, Severity::kError);
  EXPECT_THAT(findings[0].message, HasSubstr("forward-capture step of builtin:defect/item-in-forward failed"));
  EXPECT_THAT(findings[0].message, HasSubstr("operation not permitted"));
  EXPECT_EQ(findings[0].where.nvtx_path, "graphcheck:forward-capture");
}

TEST(PipelineStepFailedTest, CleanWhenEveryStepRan) {
  EngineRun run;
  run.steps = {Step{"eager-reference", StepStatus::kOk, 10, ""}, Step{"replay", StepStatus::kOk, 5, ""}};
  EXPECT_TRUE(RunOn(run).empty());
}

}  // namespace
}  // namespace graphcheck::checks
