// One speedup per check report: the trace's graphed.speedup and forecast error go, the forecast is compared with the
// engine's CUDA-event step times instead; without a forecast nothing is added.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "analysis/launch_metrics.h"
#include "cli/check_command.h"

namespace graphcheck {
namespace {

std::map<std::string, double> Values(const std::vector<Metric>& metrics) {
  std::map<std::string, double> values;
  for (const Metric& m : metrics) values[m.name] = m.value;
  return values;
}

TEST(CheckMetricsTest, TheForecastIsComparedWithTheEnginesTimes) {
  // MobileNetV3-small on an H100: the trace's recorded eager step 112 ms, the engine's 20.5 ms.
  std::vector<Metric> metrics = {
      {"launch.iteration_us", 112000, "us", ""}, {"launch.forecast_graphed_us", 4000, "us", ""},
      {"graphed.speedup", 26.6, "ratio", ""},    {"graphed.forecast_error_ratio", -0.54, "ratio", ""},
      {"check.eager_step_us", 20500, "us", ""},  {"check.graphed_step_us", 4360, "us", ""},
      {"check.speedup", 4.7, "ratio", ""}};
  analysis::UseEngineTimesForTheForecast(&metrics);
  const std::map<std::string, double> v = Values(metrics);
  EXPECT_EQ(v.count("graphed.speedup"), 0u);
  EXPECT_EQ(v.count("graphed.forecast_error_ratio"), 0u);
  EXPECT_DOUBLE_EQ(v.at("check.speedup"), 4.7);
  EXPECT_DOUBLE_EQ(v.at("check.forecast_savings_us"), 16500);
  EXPECT_DOUBLE_EQ(v.at("check.forecast_error_ratio"), (4000.0 - 4360) / 4360);
}

// builtin:mlp on an H100: the recorded run's eager step 1204 us, the run without the recorder 700 us. The forecast then
// keeps what stays eager as that run timed it (80 us), not the trace's recorded 161 us.
TEST(CheckMetricsTest, TimesWithoutTheRecorderReplaceTheRecordedOnes) {
  std::vector<Metric> metrics = {{"check.eager_step_us", 1204, "us", "eager step, median (CUDA events)"},
                                 {"check.eager_step_us_p10", 1150, "us", ""},
                                 {"check.graphed_step_us", 681, "us", ""},
                                 {"check.speedup", 1.77, "ratio", ""},
                                 {"check.graph_nodes", 36, "count", ""},
                                 {"launch.forecast_graphed_us", 360, "us", ""},
                                 {"launch.outside_graphable_us", 161, "us", ""},
                                 {"launch.forecast_host_path_us", 360, "us", ""},
                                 {"launch.forecast_gpu_path_us", 230, "us", ""}};
  const std::vector<Metric> unrecorded = {{"check.eager_step_us", 700, "us", "eager step, median (CUDA events)"},
                                          {"check.eager_step_us_p10", 680, "us", ""},
                                          {"check.graphed_step_us", 285, "us", ""},
                                          {"check.speedup", 700.0 / 285, "ratio", ""},
                                          {"check.eager_outside_graphable_us", 80, "us", ""},
                                          {"check.graph_nodes", 99, "count", ""}};
  UseUnrecordedTimes(unrecorded, &metrics);
  analysis::UseEngineTimesForTheForecast(&metrics);
  const std::map<std::string, double> v = Values(metrics);
  EXPECT_DOUBLE_EQ(v.at("check.eager_step_us"), 700);
  EXPECT_DOUBLE_EQ(v.at("check.eager_step_us_p10"), 680);
  EXPECT_DOUBLE_EQ(v.at("check.graphed_step_us"), 285);
  EXPECT_DOUBLE_EQ(v.at("check.speedup"), 700.0 / 285);
  EXPECT_DOUBLE_EQ(v.at("check.graph_nodes"), 36);  // the recorded run's own metrics stay
  EXPECT_DOUBLE_EQ(v.at("check.recorded_eager_step_us"), 1204);
  EXPECT_DOUBLE_EQ(v.at("check.recorder_perturbation_ratio"), 1204.0 / 700 - 1);
  // The host path with the unrecorded eager rest (279 us) is longer than the GPU path (230 us).
  EXPECT_DOUBLE_EQ(v.at("check.forecast_graphed_us"), 360 - 161 + 80);
  EXPECT_DOUBLE_EQ(v.at("check.forecast_error_ratio"), (279.0 - 285) / 285);
  const auto eager =
      std::find_if(metrics.begin(), metrics.end(), [](const Metric& m) { return m.name == "check.eager_step_us"; });
  EXPECT_THAT(eager->description, ::testing::HasSubstr("without the recorder"));
}

// A GPU-bound graphed step: with the unrecorded eager rest the host path (900 us) is shorter than the GPU path, which
// stays the forecast.
TEST(CheckMetricsTest, TheUnrecordedEagerRestChangesOnlyTheHostPath) {
  std::vector<Metric> metrics = {{"check.eager_step_us", 7000, "us", ""},
                                 {"check.graphed_step_us", 1800, "us", ""},
                                 {"check.eager_outside_graphable_us", 800, "us", ""},
                                 {"launch.forecast_graphed_us", 1750, "us", ""},
                                 {"launch.outside_graphable_us", 1000, "us", ""},
                                 {"launch.forecast_host_path_us", 1100, "us", ""},
                                 {"launch.forecast_gpu_path_us", 1750, "us", ""}};
  analysis::UseEngineTimesForTheForecast(&metrics);
  const std::map<std::string, double> v = Values(metrics);
  EXPECT_DOUBLE_EQ(v.at("check.forecast_graphed_us"), 1750);
  EXPECT_DOUBLE_EQ(v.at("check.forecast_error_ratio"), (1750.0 - 1800) / 1800);
}

TEST(CheckMetricsTest, NoForecastNothingAdded) {
  std::vector<Metric> metrics = {{"check.eager_step_us", 20500, "us", ""}, {"graphed.speedup", 3, "ratio", ""}};
  analysis::UseEngineTimesForTheForecast(&metrics);
  const std::map<std::string, double> v = Values(metrics);
  EXPECT_EQ(v.size(), 1u);
  EXPECT_EQ(v.count("check.eager_step_us"), 1u);
}

}  // namespace
}  // namespace graphcheck
