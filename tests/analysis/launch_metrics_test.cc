#include "analysis/launch_metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "analysis/trace_analysis.h"
#include "tests/checks/trace/launch_test_util.h"
#include "trace/trace_reader.h"

namespace graphcheck::testing_trace {
namespace {

std::map<std::string, double> Metrics(const trace::Trace& trace, const std::string& region = "") {
  const analysis::TraceAnalysis analysis(trace);
  analysis::IterationOptions iterations;
  iterations.region = region;
  std::map<std::string, double> values;
  for (const Metric& m :
       analysis::LaunchMetrics(analysis::ComputeLaunchStats(analysis, iterations, analysis::LaunchModel()))) {
    values[m.name] = m.value;
  }
  return values;
}

// Seven recorded 100 us steps from `*t`: 10 kernels of 1 us each, the first 5 launched inside a graphable range
// (kernels 2-4 from another thread, as autograd's device thread launches a backward).
void AddGraphableSteps(TraceBuilder& b, uint64_t* t, uint64_t kernel_ns = 1000) {
  uint64_t gpu = 0;
  for (int s = 0; s < 7; ++s, *t += 100000) {
    b.Push(*t, 1, "step");
    b.Push(*t, 1, "graphcheck:graphable");
    for (int k = 0; k < 10; ++k) {
      if (k == 5) b.Pop(*t + 4500, 1);
      ApiCall& call = b.Launch(*t + k * 1000, k >= 2 && k < 5 ? 2 : 1, 7, "k" + std::to_string(k));
      trace::KernelRecord kernel;
      kernel.correlation_id = call.correlation_id;
      kernel.start_ns = std::max(gpu, *t + k * 1000 + 5000);
      kernel.end_ns = gpu = kernel.start_ns + kernel_ns;
      kernel.name = call.kernel_name;
      kernel.stream_id = 7;
      b.trace().AddKernel(kernel);
    }
    b.Pop(*t + 100000 - 1, 1);
  }
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

TEST(LaunchMetricsTest, OneSlowStepMovesNeitherTheStepTimeNorTheForecast) {
  // Nine 100 us "step" ranges launching 10 kernels of 1 us through the step, as LaunchBoundTrace's steps do; one of
  // them stalls on the host for 66 ms after its kernels (as
  // one step in a GPT-2 check did on an H100). A mean step time would be 8.3 ms and the forecast's saving 99%.
  TraceBuilder b;
  uint64_t t = 1000000;
  for (int s = 0; s < 9; ++s) {
    const uint64_t length_ns = s == 5 ? 66000000 : 100000;
    b.Push(t, 1, "step");
    for (int k = 0; k < 10; ++k) {
      ApiCall& call = b.Launch(t + k * 11000, 1, 7, "k" + std::to_string(k));
      trace::KernelRecord kernel;
      kernel.correlation_id = call.correlation_id;
      kernel.start_ns = t + k * 11000 + 5000;
      kernel.end_ns = kernel.start_ns + 1000;
      kernel.name = call.kernel_name;
      kernel.stream_id = 7;
      b.trace().AddKernel(kernel);
    }
    b.Pop(t + length_ns, 1);
    t += length_ns;
  }
  std::map<std::string, double> m = Metrics(b.Build(), "step");
  EXPECT_DOUBLE_EQ(m["launch.iteration_us"], 100);
  EXPECT_DOUBLE_EQ(m["launch.iteration_us_p10"], 100);
  EXPECT_DOUBLE_EQ(m["launch.gpu_idle_us"], 90);
  EXPECT_DOUBLE_EQ(m["launch.forecast_savings_ratio"], 0.865);
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

// Graphed steps outside every launch-recording window (the default mode closes its first window after 8 steps) still
// have their time and give the speedup; their GPU times are unknown.
TEST(LaunchMetricsTest, GraphedStepsOutsideLaunchRecordingHaveTheirTime) {
  std::map<std::string, double> m = Metrics(SampledTrace(14, 7, 1000, 9), "step");
  EXPECT_EQ(m["graphed.iterations"], 8);  // the step range's warmup skips the first
  EXPECT_DOUBLE_EQ(m["graphed.iteration_us"], 40);
  EXPECT_DOUBLE_EQ(m["graphed.speedup"], 100.0 / 40);
  EXPECT_EQ(m.count("graphed.gpu_busy_us"), 0u);
}

// A GPU-bound step (kernels of 100 us, ten a step): the host runs ahead, so a step's host span (100 us) is not its
// time; the step takes the GPU's 1000 us whether launches are recorded or not, and recording perturbed nothing.
TEST(LaunchMetricsTest, GpuBoundStepIsNotPerturbedByRecording) {
  std::map<std::string, double> m = Metrics(SampledTrace(14, 7, 100000), "step");
  EXPECT_DOUBLE_EQ(m["launch.gpu_busy_us"], 1000);
  EXPECT_DOUBLE_EQ(m["launch.iteration_us"], 1000);
  EXPECT_NEAR(m["launch.recorder_perturbation_ratio"], 0, 0.01);
  EXPECT_NEAR(m["launch.forecast_savings_us"], 0, 1e-9);
}

// Steps whose graphable ranges (graphcheck check marks forward and backward) hold 5 of their 10 kernels: the graphs
// would replay those (5 us of GPU time, one launch, 5 nodes), whichever thread launched them; the rest of the 100 us
// step (95 us: the loss, the optimizer) stays eager. The host's 95 us of it outlasts everything the GPU does (the
// graph's 5 us, its 5 node costs and launch, the eager kernels' 5 us), so the host path is the forecast.
TEST(LaunchMetricsTest, OnlyTheGraphablePartIsReplacedByItsGpuTime) {
  TraceBuilder b;
  uint64_t t = 1000000;
  AddGraphableSteps(b, &t);
  std::map<std::string, double> m = Metrics(b.Build(), "step");
  EXPECT_NEAR(m["launch.outside_graphable_us"], 95, 0.01);
  EXPECT_NEAR(m["launch.forecast_host_path_us"], 95 + 2.5, 0.01);
  EXPECT_NEAR(m["launch.forecast_gpu_path_us"], 5 + 0.1 * 5 + 2.5 + 5, 0.01);
  EXPECT_NEAR(m["launch.forecast_graphed_us"], 95 + 2.5, 0.01);
}

// The same steps with 30 us kernels: the GPU is the bottleneck (300 us a step). The eager rest's time overlaps the
// graph's replay, so the forecast is the GPU path (both parts' GPU time), not their sum with the host's time.
TEST(LaunchMetricsTest, AGpuBoundGraphedStepIsItsGpuPath) {
  TraceBuilder b;
  uint64_t t = 1000000;
  AddGraphableSteps(b, &t, /*kernel_ns=*/30000);
  std::map<std::string, double> m = Metrics(b.Build(), "step");
  EXPECT_NEAR(m["launch.forecast_gpu_path_us"], 150 + 0.1 * 5 + 2.5 + 150, 0.01);
  EXPECT_LT(m["launch.forecast_host_path_us"], m["launch.forecast_gpu_path_us"]);
  EXPECT_NEAR(m["launch.forecast_graphed_us"], m["launch.forecast_gpu_path_us"], 0.01);
}

// A sampled trace of steps with graphable ranges: recorded ones as above (100 us, 95 of them outside the graphable
// range), then steps outside launch recording, which run faster (60 us; 40 us of it in the graphable range, by NVTX).
// The part that stays eager is taken from those: 60 - max(40 us of host, the recorded 5 us GPU span of the graphable
// kernels) = 20 us.
TEST(LaunchMetricsTest, TimeOutsideGraphableRangesFromTheUnperturbedSteps) {
  TraceBuilder b;
  b.trace().recorder.launches = trace::LaunchRecording::kSampled;
  uint64_t t = 1000000;
  const uint64_t window_start = t;
  AddGraphableSteps(b, &t);
  b.trace().launch_windows.push_back({window_start, t - 1});
  for (int s = 0; s < 7; ++s, t += 60000) {
    b.Push(t, 1, "step");
    b.Push(t, 1, "graphcheck:graphable");
    b.Pop(t + 40000, 1);
    b.Pop(t + 60000, 1);
  }
  std::map<std::string, double> m = Metrics(b.Build(), "step");
  EXPECT_EQ(m["launch.unperturbed_iterations"], 7);
  EXPECT_NEAR(m["launch.iteration_us"], 60, 0.01);
  EXPECT_NEAR(m["launch.outside_graphable_us"], 20, 0.01);
  EXPECT_NEAR(m["launch.forecast_graphed_us"], std::max(20 + 2.5, 5 + 0.1 * 5 + 2.5 + 5), 0.01);
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

// Replayed kernels count once in a graphed step's GPU busy time (issue 47; trace analysers that add them to the
// replay's own span count them twice or drop them). On examples/traces/eager_then_graphed (an H100, 12 replays of a
// graph of 105 kernels, the kernels only, no graph-level records): graphed.gpu_busy_us, the median over the graphed
// steps, is the median time from a replay's first kernel start to its last kernel end, computed here from the kernel
// records alone, plus the little eager work of the step (its input copies): not the sum of the two.
TEST(LaunchMetricsTest, AReplaysKernelsCountOnceInTheGraphedStepsBusyTime) {
  absl::StatusOr<trace::Trace> trace =
      trace::ReadTrace(std::string(GRAPHCHECK_SOURCE_DIR) + "/examples/traces/eager_then_graphed/trace.gctrace");
  ASSERT_TRUE(trace.ok()) << trace.status();
  std::map<uint64_t, std::pair<uint64_t, uint64_t>> replays;  // graph launch correlation -> first start, last end
  for (const trace::KernelActivity& kernel : trace->kernels) {
    if (kernel.graph_id == 0) continue;
    auto [it, added] = replays.try_emplace(kernel.correlation_id, kernel.start_ns, kernel.end_ns);
    it->second.first = std::min(it->second.first, kernel.start_ns);
    it->second.second = std::max(it->second.second, kernel.end_ns);
  }
  ASSERT_EQ(replays.size(), 12u);
  std::vector<double> spans_us;
  for (const auto& [correlation, span] : replays) spans_us.push_back((span.second - span.first) / 1e3);
  std::sort(spans_us.begin(), spans_us.end());
  const double median_span_us = (spans_us[5] + spans_us[6]) / 2;

  const std::map<std::string, double> metrics = Metrics(*trace);
  ASSERT_TRUE(metrics.count("graphed.gpu_busy_us"));
  const double busy_us = metrics.at("graphed.gpu_busy_us");
  EXPECT_GE(busy_us, median_span_us);
  EXPECT_LE(busy_us, 1.02 * median_span_us) << "replayed kernels counted twice, or the step's eager work is large";
  std::printf("eager_then_graphed: graphed.gpu_busy_us %.1f us, median replay span from kernel records %.1f us\n",
              busy_us, median_span_us);
}

}  // namespace
}  // namespace graphcheck::testing_trace
