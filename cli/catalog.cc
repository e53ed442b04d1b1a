// The catalogue of built-in checks: one line per check, its factory. A check's class, test and doc page carry the
// rest (docs/add-a-check.md).
#include "cli/catalog.h"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

#include "checks/checks.h"

namespace graphcheck {

std::vector<std::unique_ptr<Check>> NewBuiltinChecks() {
  std::vector<std::unique_ptr<Check>> checks;
  for (auto* make : {
           // capture
           &checks::NewCaptureErrorCheck,           // capture-error
           &checks::NewSyncInCaptureCheck,          // sync-in-capture
           &checks::NewUnsafeApiInCaptureCheck,     // unsafe-api-in-capture
           &checks::NewAllocInCaptureCheck,         // alloc-in-capture
           &checks::NewLegacyStreamInCaptureCheck,  // legacy-stream-in-capture
           &checks::NewUnjoinedStreamCheck,         // unjoined-stream
           &checks::NewPageableMemcpyCheck,         // pageable-memcpy
           &checks::NewEmptyGraphCheck,             // empty-graph
           &checks::NewRecaptureChurnCheck,         // recapture-churn
           &checks::NewWarmupInsufficientCheck,     // warmup-insufficient
           // eager region
           &checks::NewSyncInRegionCheck,        // sync-in-region
           &checks::NewDynamicShapeCheck,        // dynamic-shape
           &checks::NewDynamicControlFlowCheck,  // dynamic-control-flow
           // performance
           &checks::NewLaunchBoundCheck,               // launch-bound
           &checks::NewNoSpeedupCheck,                 // no-speedup
           &checks::NewGraphMemoryCheck,               // graph-memory
           &checks::NewMegatronGraphsNotCreatedCheck,  // megatron-graphs-not-created
           // state and RNG (from the Python probe's exceptions)
           &checks::NewOutputOverwrittenCheck,         // output-overwritten
           &checks::NewAddressDriftCheck,              // address-drift
           &checks::NewStaticInputReboundCheck,        // static-input-rebound
           &checks::NewHostValueFrozenCheck,           // host-value-frozen
           &checks::NewGradDetachedCheck,              // grad-detached
           &checks::NewGradAliasesGraphCheck,          // grad-aliases-graph
           &checks::NewGraphReadsFreedCheck,           // graph-reads-freed
           &checks::NewStateMadeInCaptureCheck,        // state-made-in-capture
           &checks::NewTrainingModeFrozenCheck,        // training-mode-frozen
           &checks::NewRngHostDrawCheck,               // rng-host-draw
           &checks::NewGraphContractCheck,             // graph-contract
           &checks::NewReplayOrderCheck,               // replay-order
           &checks::NewRngUnregisteredGeneratorCheck,  // rng-unregistered-generator
           &checks::NewRngInferenceStateCheck,         // rng-inference-state
           // torch.compile
           &checks::NewCompileCudagraphSkippedCheck,  // compile-cudagraph-skipped
           // the program's stderr
           &checks::NewStderrMessagesCheck,  // stderr-messages
           &checks::NewCuptiBusyCheck,       // cupti-busy
           // distributed jobs (every process's summary)
           &checks::NewRankDivergentCaptureCheck,      // rank-divergent-capture
           &checks::NewRankDivergentCollectivesCheck,  // rank-divergent-collectives
           &checks::NewHangCheck,                      // hang (--hang-timeout)
           &checks::NewDdpDefaultStreamCheck,          // ddp-default-stream
           &checks::NewDdpWarmupShortCheck,            // ddp-warmup-short
           // the trace itself
           &checks::NewTraceIncompleteCheck,  // trace-incomplete
           // environment (lint, run, analyze)
           &checks::NewEnvExpandableSegmentsNcclRegisterCheck,  // env-expandable-segments-nccl-register
           &checks::NewEnvLaunchBlockingCheck,                  // env-launch-blocking
           &checks::NewEnvNcclAsyncErrorHandlingCheck,          // env-nccl-async-error-handling
           &checks::NewEnvNoCachingAllocatorCheck,              // env-no-caching-allocator
           // configuration (lint --config, lint --order)
           &checks::NewConfigCpuOffloadingCheck,                   // config-cpu-offloading
           &checks::NewConfigDelayedWgradCheck,                    // config-delayed-wgrad
           &checks::NewConfigExpandableSegmentsNcclRegisterCheck,  // config-expandable-segments-nccl-register
           &checks::NewConfigFullIterationImplCheck,               // config-full-iteration-impl
           &checks::NewConfigFullIterationNanCheckCheck,           // config-full-iteration-nan-check
           &checks::NewConfigMoePreprocessRequiresRouterCheck,     // config-moe-preprocess-requires-router
           &checks::NewConfigMoeRecomputeRouterCheck,              // config-moe-recompute-router
           &checks::NewConfigMoeScopeDroplessCheck,                // config-moe-scope-dropless
           &checks::NewConfigMoeScopeExclusiveCheck,               // config-moe-scope-exclusive
           &checks::NewConfigMoeScopeWithoutMoeCheck,              // config-moe-scope-without-moe
           &checks::NewConfigStaticShapesCheck,                    // config-static-shapes
           &checks::NewConfigTeRngTrackerCheck,                    // config-te-rng-tracker
           &checks::NewConfigUnknownCudaGraphValueCheck,           // config-unknown-cuda-graph-value
           &checks::NewScheduleOrderCheck,                         // schedule-order
           // what `check`'s engine measured, and --shadow's comparisons in a trace
           &checks::NewPipelineStepFailedCheck,  // pipeline-step-failed
           &checks::NewNumericsForwardCheck,     // numerics-forward
           &checks::NewNumericsGradCheck,        // numerics-grad
           &checks::NewNumericsLossCheck,        // numerics-loss
           &checks::NewNumericsNonfiniteCheck,   // numerics-nonfinite
           &checks::NewReplayMismatchCheck,      // replay-mismatch
           &checks::NewStateElidedCheck,         // state-elided
           &checks::NewRngEagerMismatchCheck,    // rng-eager-mismatch
           &checks::NewRngFrozenMaskCheck,       // rng-frozen-mask
       }) {
    checks.push_back(make());
  }
  return checks;
}

const CheckRegistry& BuiltinChecks() {
  static const CheckRegistry* const kRegistry = [] {
    auto* registry = new CheckRegistry();
    if (absl::Status status = registry->AddAll(NewBuiltinChecks()); !status.ok()) {
      std::fprintf(stderr, "graphcheck: internal error: %s\n", status.ToString().c_str());
      std::abort();  // a duplicate or malformed check id is a build defect, caught by catalog_test
    }
    return registry;
  }();
  return *kRegistry;
}

}  // namespace graphcheck
