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
           &analyzers::NewCaptureErrorCheck,           // capture-error
           &analyzers::NewSyncInCaptureCheck,          // sync-in-capture
           &analyzers::NewUnsafeApiInCaptureCheck,     // unsafe-api-in-capture
           &analyzers::NewAllocInCaptureCheck,         // alloc-in-capture
           &analyzers::NewLegacyStreamInCaptureCheck,  // legacy-stream-in-capture
           &analyzers::NewUnjoinedStreamCheck,         // unjoined-stream
           &analyzers::NewPageableMemcpyCheck,         // pageable-memcpy
           &analyzers::NewEmptyGraphCheck,             // empty-graph
           &analyzers::NewRecaptureChurnCheck,         // recapture-churn
           &analyzers::NewWarmupInsufficientCheck,     // warmup-insufficient
           // eager region
           &analyzers::NewSyncInRegionCheck,        // sync-in-region
           &analyzers::NewDynamicShapeCheck,        // dynamic-shape
           &analyzers::NewDynamicControlFlowCheck,  // dynamic-control-flow
           // performance
           &analyzers::NewLaunchBoundCheck,               // launch-bound
           &analyzers::NewNoSpeedupCheck,                 // no-speedup
           &analyzers::NewGraphMemoryCheck,               // graph-memory
           &analyzers::NewMegatronGraphsNotCreatedCheck,  // megatron-graphs-not-created
           // state and RNG (from the Python probe's exceptions)
           &analyzers::NewOutputOverwrittenCheck,         // output-overwritten
           &analyzers::NewAddressDriftCheck,              // address-drift
           &analyzers::NewStaticInputReboundCheck,        // static-input-rebound
           &analyzers::NewHostValueFrozenCheck,           // host-value-frozen
           &analyzers::NewGradDetachedCheck,              // grad-detached
           &analyzers::NewGradAliasesGraphCheck,          // grad-aliases-graph
           &analyzers::NewGraphReadsFreedCheck,           // graph-reads-freed
           &analyzers::NewStateMadeInCaptureCheck,        // state-made-in-capture
           &analyzers::NewTrainingModeFrozenCheck,        // training-mode-frozen
           &analyzers::NewRngHostDrawCheck,               // rng-host-draw
           &analyzers::NewGraphContractCheck,             // graph-contract
           &analyzers::NewReplayOrderCheck,               // replay-order
           &analyzers::NewRngUnregisteredGeneratorCheck,  // rng-unregistered-generator
           &analyzers::NewRngInferenceStateCheck,         // rng-inference-state
           // torch.compile
           &analyzers::NewCompileCudagraphSkippedCheck,  // compile-cudagraph-skipped
           // the program's stderr
           &analyzers::NewStderrMessagesCheck,  // stderr-messages
           &analyzers::NewCuptiBusyCheck,       // cupti-busy
           // distributed jobs (every process's summary)
           &analyzers::NewRankDivergentCaptureCheck,      // rank-divergent-capture
           &analyzers::NewRankDivergentCollectivesCheck,  // rank-divergent-collectives
           &analyzers::NewHangCheck,                      // hang (--hang-timeout)
           &analyzers::NewDdpDefaultStreamCheck,          // ddp-default-stream
           &analyzers::NewDdpWarmupShortCheck,            // ddp-warmup-short
           // the trace itself
           &analyzers::NewTraceIncompleteCheck,  // trace-incomplete
           // environment (lint, run, analyze)
           &NewEnvExpandableSegmentsNcclRegisterCheck,  // env-expandable-segments-nccl-register
           &NewEnvLaunchBlockingCheck,                  // env-launch-blocking
           &NewEnvNcclAsyncErrorHandlingCheck,          // env-nccl-async-error-handling
           &NewEnvNoCachingAllocatorCheck,              // env-no-caching-allocator
           // configuration (lint --config, lint --order)
           &NewConfigCpuOffloadingCheck,                   // config-cpu-offloading
           &NewConfigDelayedWgradCheck,                    // config-delayed-wgrad
           &NewConfigExpandableSegmentsNcclRegisterCheck,  // config-expandable-segments-nccl-register
           &NewConfigFullIterationImplCheck,               // config-full-iteration-impl
           &NewConfigFullIterationNanCheckCheck,           // config-full-iteration-nan-check
           &NewConfigMoePreprocessRequiresRouterCheck,     // config-moe-preprocess-requires-router
           &NewConfigMoeRecomputeRouterCheck,              // config-moe-recompute-router
           &NewConfigMoeScopeDroplessCheck,                // config-moe-scope-dropless
           &NewConfigMoeScopeExclusiveCheck,               // config-moe-scope-exclusive
           &NewConfigMoeScopeWithoutMoeCheck,              // config-moe-scope-without-moe
           &NewConfigStaticShapesCheck,                    // config-static-shapes
           &NewConfigTeRngTrackerCheck,                    // config-te-rng-tracker
           &NewConfigUnknownCudaGraphValueCheck,           // config-unknown-cuda-graph-value
           &NewScheduleOrderCheck,                         // schedule-order
           // what `check`'s engine measured, and --shadow's comparisons in a trace
           &NewPipelineStepFailedCheck,  // pipeline-step-failed
           &NewNumericsForwardCheck,     // numerics-forward
           &NewNumericsGradCheck,        // numerics-grad
           &NewNumericsLossCheck,        // numerics-loss
           &NewNumericsNonfiniteCheck,   // numerics-nonfinite
           &NewReplayMismatchCheck,      // replay-mismatch
           &NewStateElidedCheck,         // state-elided
           &NewRngEagerMismatchCheck,    // rng-eager-mismatch
           &NewRngFrozenMaskCheck,       // rng-frozen-mask
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
