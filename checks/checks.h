// Factories of every check, one per check id (each class lives in its own .cc, in the folder of what it reads:
// trace/, engine/, config/, environment/, job/, output/). cli/catalog.cc registers them; tests construct them one
// by one.
#ifndef GRAPHCHECK_CHECKS_CHECKS_H_
#define GRAPHCHECK_CHECKS_CHECKS_H_

#include <memory>

#include "core/check.h"

namespace graphcheck::checks {

// capture
std::unique_ptr<Check> NewCaptureErrorCheck();           // capture-error
std::unique_ptr<Check> NewSyncInCaptureCheck();          // sync-in-capture
std::unique_ptr<Check> NewUnsafeApiInCaptureCheck();     // unsafe-api-in-capture
std::unique_ptr<Check> NewAllocInCaptureCheck();         // alloc-in-capture
std::unique_ptr<Check> NewLegacyStreamInCaptureCheck();  // legacy-stream-in-capture
std::unique_ptr<Check> NewUnjoinedStreamCheck();         // unjoined-stream
std::unique_ptr<Check> NewPageableMemcpyCheck();         // pageable-memcpy
std::unique_ptr<Check> NewEmptyGraphCheck();             // empty-graph
std::unique_ptr<Check> NewRecaptureChurnCheck();         // recapture-churn
std::unique_ptr<Check> NewWarmupInsufficientCheck();     // warmup-insufficient
// eager region
std::unique_ptr<Check> NewSyncInRegionCheck();        // sync-in-region
std::unique_ptr<Check> NewDynamicShapeCheck();        // dynamic-shape
std::unique_ptr<Check> NewDynamicControlFlowCheck();  // dynamic-control-flow
// performance
std::unique_ptr<Check> NewLaunchBoundCheck();               // launch-bound
std::unique_ptr<Check> NewNoSpeedupCheck();                 // no-speedup
std::unique_ptr<Check> NewGraphMemoryCheck();               // graph-memory
std::unique_ptr<Check> NewMegatronGraphsNotCreatedCheck();  // megatron-graphs-not-created
// state and RNG (from the Python probe's exceptions)
std::unique_ptr<Check> NewOutputOverwrittenCheck();   // output-overwritten
std::unique_ptr<Check> NewAddressDriftCheck();        // address-drift
std::unique_ptr<Check> NewStaticInputReboundCheck();  // static-input-rebound
std::unique_ptr<Check> NewHostValueFrozenCheck();     // host-value-frozen
std::unique_ptr<Check> NewGradDetachedCheck();        // grad-detached
// the capture contract (the graph's manifest and the probe's watches of what it baked in)
std::unique_ptr<Check> NewGradAliasesGraphCheck();          // grad-aliases-graph
std::unique_ptr<Check> NewGraphReadsFreedCheck();           // graph-reads-freed
std::unique_ptr<Check> NewStateMadeInCaptureCheck();        // state-made-in-capture
std::unique_ptr<Check> NewTrainingModeFrozenCheck();        // training-mode-frozen
std::unique_ptr<Check> NewRngHostDrawCheck();               // rng-host-draw
std::unique_ptr<Check> NewGraphContractCheck();             // graph-contract
std::unique_ptr<Check> NewReplayOrderCheck();               // replay-order
std::unique_ptr<Check> NewRngUnregisteredGeneratorCheck();  // rng-unregistered-generator
std::unique_ptr<Check> NewRngInferenceStateCheck();         // rng-inference-state
// torch.compile
std::unique_ptr<Check> NewCompileCudagraphSkippedCheck();  // compile-cudagraph-skipped
// the program's stderr
std::unique_ptr<Check> NewStderrMessagesCheck();  // stderr-messages
std::unique_ptr<Check> NewCuptiBusyCheck();       // cupti-busy
// distributed jobs (every process's summary)
std::unique_ptr<Check> NewRankDivergentCaptureCheck();      // rank-divergent-capture
std::unique_ptr<Check> NewRankDivergentCollectivesCheck();  // rank-divergent-collectives
std::unique_ptr<Check> NewHangCheck();                      // hang (--hang-timeout)
// The fix `hang` gives when the trace shows no cause of the wait (the job's collective ledgers may name one).
extern const char kHangFixWithoutCause[];
std::unique_ptr<Check> NewDdpDefaultStreamCheck();  // ddp-default-stream
std::unique_ptr<Check> NewDdpWarmupShortCheck();    // ddp-warmup-short
// the trace itself
std::unique_ptr<Check> NewTraceIncompleteCheck();  // trace-incomplete

// environment (lint, run, analyze)
std::unique_ptr<Check> NewEnvExpandableSegmentsNcclRegisterCheck();  // env-expandable-segments-nccl-register
std::unique_ptr<Check> NewEnvLaunchBlockingCheck();                  // env-launch-blocking
std::unique_ptr<Check> NewEnvNcclAsyncErrorHandlingCheck();          // env-nccl-async-error-handling
std::unique_ptr<Check> NewEnvNoCachingAllocatorCheck();              // env-no-caching-allocator
// configuration (lint --config, lint --order)
std::unique_ptr<Check> NewConfigCpuOffloadingCheck();                   // config-cpu-offloading
std::unique_ptr<Check> NewConfigDelayedWgradCheck();                    // config-delayed-wgrad
std::unique_ptr<Check> NewConfigExpandableSegmentsNcclRegisterCheck();  // config-expandable-segments-nccl-register
std::unique_ptr<Check> NewConfigFullIterationImplCheck();               // config-full-iteration-impl
std::unique_ptr<Check> NewConfigFullIterationNanCheckCheck();           // config-full-iteration-nan-check
std::unique_ptr<Check> NewConfigMoePreprocessRequiresRouterCheck();     // config-moe-preprocess-requires-router
std::unique_ptr<Check> NewConfigMoeRecomputeRouterCheck();              // config-moe-recompute-router
std::unique_ptr<Check> NewConfigMoeScopeDroplessCheck();                // config-moe-scope-dropless
std::unique_ptr<Check> NewConfigMoeScopeExclusiveCheck();               // config-moe-scope-exclusive
std::unique_ptr<Check> NewConfigMoeScopeWithoutMoeCheck();              // config-moe-scope-without-moe
std::unique_ptr<Check> NewConfigStaticShapesCheck();                    // config-static-shapes
std::unique_ptr<Check> NewConfigTeRngTrackerCheck();                    // config-te-rng-tracker
std::unique_ptr<Check> NewConfigUnknownCudaGraphValueCheck();           // config-unknown-cuda-graph-value
std::unique_ptr<Check> NewScheduleOrderCheck();                         // schedule-order
// what `check`'s engine measured, and --shadow's comparisons in a trace
std::unique_ptr<Check> NewPipelineStepFailedCheck();  // pipeline-step-failed
std::unique_ptr<Check> NewNumericsForwardCheck();     // numerics-forward
std::unique_ptr<Check> NewNumericsGradCheck();        // numerics-grad
std::unique_ptr<Check> NewNumericsLossCheck();        // numerics-loss
std::unique_ptr<Check> NewNumericsNonfiniteCheck();   // numerics-nonfinite
std::unique_ptr<Check> NewReplayMismatchCheck();      // replay-mismatch
std::unique_ptr<Check> NewStateElidedCheck();         // state-elided
std::unique_ptr<Check> NewRngEagerMismatchCheck();    // rng-eager-mismatch
std::unique_ptr<Check> NewRngFrozenMaskCheck();       // rng-frozen-mask

}  // namespace graphcheck::checks

#endif  // GRAPHCHECK_CHECKS_CHECKS_H_
