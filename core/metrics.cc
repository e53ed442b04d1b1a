#include "core/metrics.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/strip.h"

namespace graphcheck::metric {

const std::vector<const Spec*>& All() {
  static const std::vector<const Spec*>* const kAll = new std::vector<const Spec*>{&kLaunchIterations,
                                                                                   &kLaunchIterationUs,
                                                                                   &kLaunchIterationUsP10,
                                                                                   &kLaunchIterationUsP90,
                                                                                   &kLaunchKernelsPerIteration,
                                                                                   &kLaunchCpuLaunchUs,
                                                                                   &kLaunchUnperturbedIterations,
                                                                                   &kLaunchRecordedIterationUs,
                                                                                   &kLaunchRecorderPerturbationRatio,
                                                                                   &kLaunchGpuBusyUs,
                                                                                   &kLaunchGpuIdleUs,
                                                                                   &kLaunchGpuUtilization,
                                                                                   &kLaunchLaunchDelayUs,
                                                                                   &kLaunchShortKernelsPerIteration,
                                                                                   &kLaunchForecastGraphedUs,
                                                                                   &kLaunchForecastSavingsUs,
                                                                                   &kLaunchForecastSavingsRatio,
                                                                                   &kLaunchOutsideGraphableUs,
                                                                                   &kLaunchForecastHostPathUs,
                                                                                   &kLaunchForecastGpuPathUs,
                                                                                   &kGraphedIterations,
                                                                                   &kGraphedIterationUs,
                                                                                   &kGraphedIterationUsP10,
                                                                                   &kGraphedIterationUsP90,
                                                                                   &kGraphedGraphLaunchesPerIteration,
                                                                                   &kGraphedGpuBusyUs,
                                                                                   &kGraphedSpeedup,
                                                                                   &kGraphedForecastErrorRatio,
                                                                                   &kCoverageSteps,
                                                                                   &kCoverageStepsWithoutRecords,
                                                                                   &kCoverageGraphedKernelShare,
                                                                                   &kCoverageGraphedGpuTimeShare,
                                                                                   &kCoverageEagerGpuUs,
                                                                                   &kMemoryForecastSteps,
                                                                                   &kMemoryForecastPoolBytes,
                                                                                   &kMemoryForecastWorkspaceBytes,
                                                                                   &kMemoryForecastLivePeakBytes,
                                                                                   &kMemoryForecastOutlivingBytes,
                                                                                   &kMemoryForecastPrivatePoolsBytes,
                                                                                   &kCompileRecordings,
                                                                                   &kCompileRecordingCallSites,
                                                                                   &kCompileReplays,
                                                                                   &kCompileCudagraphSkips,
                                                                                   &kCompileReplayGpuShare,
                                                                                   &kShadowCallsCompared,
                                                                                   &kShadowReplaysCompared,
                                                                                   &kShadowBackwardsCompared,
                                                                                   &kShadowCallsDrawing,
                                                                                   &kShadowCallsRandom,
                                                                                   &kShadowTensorsCompared,
                                                                                   &kShadowCostUs,
                                                                                   &kCheckEagerStepUs,
                                                                                   &kCheckEagerStepUsP10,
                                                                                   &kCheckEagerStepUsP90,
                                                                                   &kCheckGraphedStepUs,
                                                                                   &kCheckGraphedStepUsP10,
                                                                                   &kCheckGraphedStepUsP90,
                                                                                   &kCheckSpeedup,
                                                                                   &kCheckEagerOutsideGraphableUs,
                                                                                   &kCheckEagerRepeatLossSpread,
                                                                                   &kCheckNumericsTensors,
                                                                                   &kCheckGraphs,
                                                                                   &kCheckGraphNodes,
                                                                                   &kCheckCaptureMs,
                                                                                   &kCheckGraphPoolBytes,
                                                                                   &kCheckTotalMs,
                                                                                   &kCheckToolOverheadMs,
                                                                                   &kCheckEngineStartupMs,
                                                                                   &kCheckRecordedEagerStepUs,
                                                                                   &kCheckRecorderPerturbationRatio,
                                                                                   &kCheckForecastGraphedUs,
                                                                                   &kCheckForecastSavingsUs,
                                                                                   &kCheckForecastErrorRatio,
                                                                                   &kProgramExitCode,
                                                                                   &kProgramSignal};
  return *kAll;
}

const Metric* FindIn(const std::vector<Metric>& metrics, absl::string_view name) {
  for (const Metric& metric : metrics) {
    if (metric.name == name) return &metric;
  }
  return nullptr;
}

const Spec* Find(absl::string_view name) {
  // A job's per-process prefix: "pid852." (or "rank0.").
  for (absl::string_view scope : {"pid", "rank"}) {
    if (!absl::StartsWith(name, scope)) continue;
    const size_t dot = name.find('.');
    const absl::string_view number = name.substr(scope.size(), dot == absl::string_view::npos ? 0 : dot - scope.size());
    if (!number.empty() && std::all_of(number.begin(), number.end(), absl::ascii_isdigit)) name.remove_prefix(dot + 1);
  }
  if (!absl::ConsumeSuffix(&name, ".min")) absl::ConsumeSuffix(&name, ".max");
  for (const Spec* spec : All()) {
    if (name == spec->name) return spec;
  }
  // coverage.graphed_kernel_share.ORIGIN and the like: the share's spec.
  const size_t last = name.rfind('.');
  if (last != absl::string_view::npos && absl::StartsWith(name, "coverage.")) return Find(name.substr(0, last));
  return nullptr;
}

}  // namespace graphcheck::metric
