#include "analyzers/launch_metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "analyzers/trace_analysis.h"
#include "tests/analyzers/launch_test_util.h"

namespace graphcheck::testing_trace {
namespace {

std::map<std::string, double> Metrics(const trace::Trace& trace, const std::string& region = "") {
  const analyzers::TraceAnalysis analysis(trace);
  analyzers::IterationOptions iterations;
  iterations.region = region;
  std::map<std::string, double> values;
  for (const Metric& m :
       analyzers::LaunchMetrics(analyzers::ComputeLaunchStats(analysis, iterations, analyzers::LaunchModel()))) {
    values[m.name] = m.value;
  }
  return values;
}

TEST(LaunchMetricsTest, EagerStepStatisticsAndForecast) {
  std::map<std::string, double> m = Metrics(LaunchBoundTrace(1000));
  // 7 steps anchored on k0 give 6 whole steps; the first is skipped as warmup.
  EXPECT_EQ(m["launch.iterations"], 5);
  EXPECT_DOUBLE_EQ(m["launch.iteration_us"], 100);
  EXPECT_DOUBLE_EQ(m["launch.kernels_per_iteration"], 10);
  EXPECT_DOUBLE_EQ(m["launch.gpu_busy_us"], 10);
  EXPECT_DOUBLE_EQ(m["launch.gpu_idle_us"], 90);
  EXPECT_DOUBLE_EQ(m["launch.gpu_utilization"], 0.1);
  EXPECT_DOUBLE_EQ(m["launch.cpu_launch_us"], 10);
  EXPECT_DOUBLE_EQ(m["launch.launch_delay_us"], 5);
  EXPECT_DOUBLE_EQ(m["launch.short_kernels_per_iteration"], 10);
  EXPECT_DOUBLE_EQ(m["launch.forecast_graphed_us"], 13.5);
  EXPECT_DOUBLE_EQ(m["launch.forecast_savings_us"], 86.5);
  EXPECT_DOUBLE_EQ(m["launch.forecast_savings_ratio"], 0.865);
  EXPECT_EQ(m.count("graphed.iterations"), 0u);
}

TEST(LaunchMetricsTest, MeasuredGraphedStepsAndForecastError) {
  std::map<std::string, double> m = Metrics(LaunchBoundTrace(1000, 6, 30000));
  EXPECT_EQ(m["graphed.iterations"], 4);  // 6 replays: 5 steps, the first skipped
  EXPECT_DOUBLE_EQ(m["graphed.iteration_us"], 30);
  EXPECT_DOUBLE_EQ(m["graphed.gpu_busy_us"], 20);
  EXPECT_DOUBLE_EQ(m["graphed.speedup"], 100.0 / 30);
  EXPECT_DOUBLE_EQ(m["graphed.forecast_error_ratio"], (13.5 - 30) / 30);
}

// Sampled recording: the step time comes from the steps no window touched (100 us), kernels and GPU times from the
// recorded ones (whose 150 us the recorder inflated), and the perturbation is stated.
TEST(LaunchMetricsTest, StepTimeFromStepsOutsideLaunchRecording) {
  std::map<std::string, double> m = Metrics(SampledTrace(14, 7), "step");
  EXPECT_EQ(m["launch.iterations"], 6);  // the first step is the step range's warmup
  EXPECT_EQ(m["launch.unperturbed_iterations"], 7);
  EXPECT_DOUBLE_EQ(m["launch.iteration_us"], 100);
  EXPECT_DOUBLE_EQ(m["launch.recorded_iteration_us"], 150);
  EXPECT_DOUBLE_EQ(m["launch.recorder_perturbation_ratio"], 0.5);
  EXPECT_DOUBLE_EQ(m["launch.gpu_busy_us"], 10);
  EXPECT_DOUBLE_EQ(m["launch.forecast_graphed_us"], 13.5);
  EXPECT_DOUBLE_EQ(m["launch.forecast_savings_us"], 86.5);
}

// A GPU-bound step (kernels of 100 us, ten a step): the host runs ahead, so a step's host span (100 us) is not its time;
// the step takes the GPU's 1000 us whether launches are recorded or not, and recording perturbed nothing.
TEST(LaunchMetricsTest, GpuBoundStepIsNotPerturbedByRecording) {
  std::map<std::string, double> m = Metrics(SampledTrace(14, 7, 100000), "step");
  EXPECT_DOUBLE_EQ(m["launch.gpu_busy_us"], 1000);
  EXPECT_DOUBLE_EQ(m["launch.iteration_us"], 1000);
  EXPECT_NEAR(m["launch.recorder_perturbation_ratio"], 0, 0.01);
  EXPECT_NEAR(m["launch.forecast_savings_us"], 0, 1e-9);
}

// Too few steps outside the windows: the recorded steps' time, and no claim about perturbation.
TEST(LaunchMetricsTest, TooFewUnperturbedStepsUseTheRecordedOnes) {
  std::map<std::string, double> m = Metrics(SampledTrace(9, 7), "step");
  EXPECT_DOUBLE_EQ(m["launch.iteration_us"], 150);
  EXPECT_EQ(m.count("launch.unperturbed_iterations"), 0u);
  EXPECT_EQ(m.count("launch.recorder_perturbation_ratio"), 0u);
  EXPECT_DOUBLE_EQ(m["launch.forecast_savings_us"], 150 - 13.5);
}

TEST(LaunchMetricsTest, NoStepsNoMetrics) {
  TraceBuilder b;
  b.Launch(1000, 1, 7, "once");
  EXPECT_TRUE(Metrics(b.Build()).empty());
}

}  // namespace
}  // namespace graphcheck::testing_trace
