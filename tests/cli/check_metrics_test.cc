// One speedup per check report: the trace's graphed.speedup and forecast error go, the forecast is compared with the
// engine's CUDA-event step times instead; without a forecast nothing is added.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

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
  UseEngineTimesForTheForecast(&metrics);
  const std::map<std::string, double> v = Values(metrics);
  EXPECT_EQ(v.count("graphed.speedup"), 0u);
  EXPECT_EQ(v.count("graphed.forecast_error_ratio"), 0u);
  EXPECT_DOUBLE_EQ(v.at("check.speedup"), 4.7);
  EXPECT_DOUBLE_EQ(v.at("check.forecast_savings_us"), 16500);
  EXPECT_DOUBLE_EQ(v.at("check.forecast_error_ratio"), (4000.0 - 4360) / 4360);
}

TEST(CheckMetricsTest, NoForecastNothingAdded) {
  std::vector<Metric> metrics = {{"check.eager_step_us", 20500, "us", ""}, {"graphed.speedup", 3, "ratio", ""}};
  UseEngineTimesForTheForecast(&metrics);
  const std::map<std::string, double> v = Values(metrics);
  EXPECT_EQ(v.size(), 1u);
  EXPECT_EQ(v.count("check.eager_step_us"), 1u);
}

}  // namespace
}  // namespace graphcheck
