// The engine's result file: EngineRun round-trips through JSON, non-finite losses included, and a file of another
// kind is an InvalidArgument.
#include <cmath>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "report/json.h"

namespace graphcheck {
namespace {

TEST(EngineRunJsonTest, RoundTrips) {
  EngineRun run;
  run.model = "builtin:transformer";
  run.scope = "callables";
  run.compute_dtype = "bfloat16";
  run.steps = {Step{"eager-reference", StepStatus::kOk, 12.5, ""},
               Step{"forward-capture", StepStatus::kFailed, 3, "forward capture of 'x': operation not permitted"},
               Step{"replay", StepStatus::kSkipped, 0, "not run: forward-capture failed"}};
  run.metrics = {Metric{"check.speedup", 2.5, "ratio", "eager / graphed"}};
  run.eager_losses = {1.5, 1.25};
  run.graphed_losses = {1.5, 1.2500001};
  run.gpu = GpuInfo{"NVIDIA H200", 9, 0, ""};
  absl::StatusOr<EngineRun> back = EngineRunFromJson(EngineRunToJson(run));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, run);
}

TEST(EngineRunJsonTest, NonFiniteLossesComeBackAsNan) {
  EngineRun run;
  run.eager_losses = {1.0, INFINITY};
  run.graphed_losses = {std::nan("")};
  absl::StatusOr<EngineRun> back = EngineRunFromJson(EngineRunToJson(run));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->eager_losses[0], 1.0);
  EXPECT_TRUE(std::isnan(back->eager_losses[1]));
  EXPECT_TRUE(std::isnan(back->graphed_losses[0]));
}

TEST(EngineRunJsonTest, RejectsOtherFiles) {
  EXPECT_FALSE(EngineRunFromJson("{\"schema\": \"graphcheck.report/1\"}").ok());
  EXPECT_FALSE(EngineRunFromJson("not json").ok());
  EXPECT_FALSE(EngineRunFromJson("{\"schema\": \"graphcheck.engine-run/1\"}").ok());  // fields missing
}

}  // namespace
}  // namespace graphcheck
