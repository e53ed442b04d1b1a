#include "analyzers/analyzer_checks.h"

#include <memory>
#include <vector>

#include "analyzers/checks.h"

namespace graphcheck {

absl::Status RegisterAnalyzerChecks(CheckRegistry* registry) {
  using namespace analyzers;  // NOLINT: the factories
  std::vector<std::unique_ptr<Check>> checks;
  for (auto* make : {&NewCaptureErrorCheck,
                     &NewSyncInCaptureCheck,
                     &NewUnsafeApiInCaptureCheck,
                     &NewAllocInCaptureCheck,
                     &NewLegacyStreamInCaptureCheck,
                     &NewUnjoinedStreamCheck,
                     &NewPageableMemcpyCheck,
                     &NewEmptyGraphCheck,
                     &NewRecaptureChurnCheck,
                     &NewWarmupInsufficientCheck,
                     &NewSyncInRegionCheck,
                     &NewDynamicShapeCheck,
                     &NewDynamicControlFlowCheck,
                     &NewLaunchBoundCheck,
                     &NewNoSpeedupCheck,
                     &NewGraphMemoryCheck,
                     &NewMegatronGraphsNotCreatedCheck,
                     &NewOutputOverwrittenCheck,
                     &NewAddressDriftCheck,
                     &NewStaticInputReboundCheck,
                     &NewHostValueFrozenCheck,
                     &NewGradDetachedCheck,
                     &NewReplayOrderCheck,
                     &NewRngUnregisteredGeneratorCheck,
                     &NewRngInferenceStateCheck,
                     &NewCompileCudagraphSkippedCheck,
                     &NewStderrMessagesCheck,
                     &NewCuptiBusyCheck,
                     &NewRankDivergentCaptureCheck,
                     &NewHangCheck,
                     &NewDdpDefaultStreamCheck,
                     &NewDdpWarmupShortCheck,
                     &NewTraceIncompleteCheck}) {
    checks.push_back(make());
  }
  return registry->AddAll(std::move(checks));
}

}  // namespace graphcheck
