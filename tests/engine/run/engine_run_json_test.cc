// The engine's result file: EngineRun round-trips through JSON, non-finite losses included, and a file of another
// kind is an InvalidArgument.
#include <cmath>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/run/engine_run_json.h"

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
  run.metrics = {Metric{"check.speedup", 2.5, "ratio", "eager / graphed", {}}};
  run.eager_losses = {1.5, 1.25};
  run.graphed_losses = {1.5, 1.2500001};
  run.eager_repeat_losses = {1.5, 1.25};
  run.deterministic_settings = true;
  NumericsSample sample;
  sample.name = "encoder.layers.0.norm1.running_mean";
  sample.role = TensorRole::kBuffer;
  sample.dtype = "float32";
  sample.numel = 256;
  sample.max_abs_error = 0.25;
  sample.worst_index = 17;
  sample.eager_at_worst = 1.0;
  sample.graphed_at_worst = 0.75;
  sample.eager_abs_max = 3.5;
  sample.graphed_nonfinite = 2;
  sample.eager_spread = 0;
  sample.changed_in_eager = true;
  run.samples = {sample};
  run.rng_draws = RngDraws{0.75, 0, 0, 0.5, 3.0, 4, 0};
  run.shape_variation = ShapeVariation{
      "x",
      0,
      64,
      {ShapeVariant{16, true, true, 36, 1 << 20, ""}, ShapeVariant{4096, false, false, 0, 0, "out of memory"}}};
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

TEST(EngineRunJsonTest, RejectsAnUnknownTensorRole) {
  EngineRun run;
  run.samples = {NumericsSample{}};
  std::string text = EngineRunToJson(run);
  const size_t role = text.find("\"output\"");
  ASSERT_NE(role, std::string::npos);
  text.replace(role, 8, "\"weight\"");
  absl::StatusOr<EngineRun> back = EngineRunFromJson(text);
  ASSERT_FALSE(back.ok());
  EXPECT_THAT(std::string(back.status().message()), ::testing::HasSubstr("unknown tensor role 'weight'"));
}

TEST(EngineRunJsonTest, RejectsOtherFiles) {
  EXPECT_FALSE(EngineRunFromJson("{\"schema\": \"graphcheck.report/1\"}").ok());
  EXPECT_FALSE(EngineRunFromJson("not json").ok());
  EXPECT_FALSE(EngineRunFromJson("{\"schema\": \"graphcheck.engine-run/2\"}").ok());  // fields missing
}

}  // namespace
}  // namespace graphcheck
