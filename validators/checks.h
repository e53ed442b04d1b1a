// Factories of the validators' checks, one per check id (each class lives in its own .cc). cli/catalog.cc registers
// them; tests construct them one by one.
#ifndef GRAPHCHECK_VALIDATORS_CHECKS_H_
#define GRAPHCHECK_VALIDATORS_CHECKS_H_

#include <memory>

#include "core/check.h"

namespace graphcheck {

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

}  // namespace graphcheck

#endif  // GRAPHCHECK_VALIDATORS_CHECKS_H_
