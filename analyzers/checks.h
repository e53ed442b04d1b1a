// Factories of the trace analyzers, one per check id (each class lives in its own .cc). cli/catalog.cc registers
// them; tests construct them one by one.
#ifndef GRAPHCHECK_ANALYZERS_CHECKS_H_
#define GRAPHCHECK_ANALYZERS_CHECKS_H_

#include <memory>

#include "core/check.h"

namespace graphcheck::analyzers {

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

}  // namespace graphcheck::analyzers

#endif  // GRAPHCHECK_ANALYZERS_CHECKS_H_
