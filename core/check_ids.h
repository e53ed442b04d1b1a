// Every check's id, named once. A check declares its id with its constant here, and code outside checks/ that names
// a check (analysis/'s cause tables, the known-message table, cli/) refers to it through the same constant:
// tests/check_ids_test.py fails on a literal id elsewhere, and on a constant no check's documentation page names.
#ifndef GRAPHCHECK_CORE_CHECK_IDS_H_
#define GRAPHCHECK_CORE_CHECK_IDS_H_

namespace graphcheck::check_id {
inline constexpr char kAddressDrift[] = "address-drift";
inline constexpr char kAllocInCapture[] = "alloc-in-capture";
inline constexpr char kCaptureError[] = "capture-error";
inline constexpr char kCompileCudagraphSkipped[] = "compile-cudagraph-skipped";
inline constexpr char kConfigCpuOffloading[] = "config-cpu-offloading";
inline constexpr char kConfigDelayedWgrad[] = "config-delayed-wgrad";
inline constexpr char kConfigExpandableSegmentsNcclRegister[] = "config-expandable-segments-nccl-register";
inline constexpr char kConfigFullIterationImpl[] = "config-full-iteration-impl";
inline constexpr char kConfigFullIterationNanCheck[] = "config-full-iteration-nan-check";
inline constexpr char kConfigMoePreprocessRequiresRouter[] = "config-moe-preprocess-requires-router";
inline constexpr char kConfigMoeRecomputeRouter[] = "config-moe-recompute-router";
inline constexpr char kConfigMoeScopeDropless[] = "config-moe-scope-dropless";
inline constexpr char kConfigMoeScopeExclusive[] = "config-moe-scope-exclusive";
inline constexpr char kConfigMoeScopeWithoutMoe[] = "config-moe-scope-without-moe";
inline constexpr char kConfigStaticShapes[] = "config-static-shapes";
inline constexpr char kConfigTeRngTracker[] = "config-te-rng-tracker";
inline constexpr char kConfigUnknownCudaGraphValue[] = "config-unknown-cuda-graph-value";
inline constexpr char kCuptiBusy[] = "cupti-busy";
inline constexpr char kDdpDefaultStream[] = "ddp-default-stream";
inline constexpr char kDdpWarmupShort[] = "ddp-warmup-short";
inline constexpr char kDynamicControlFlow[] = "dynamic-control-flow";
inline constexpr char kDynamicShape[] = "dynamic-shape";
inline constexpr char kEmptyGraph[] = "empty-graph";
inline constexpr char kEnvExpandableSegmentsNcclRegister[] = "env-expandable-segments-nccl-register";
inline constexpr char kEnvLaunchBlocking[] = "env-launch-blocking";
inline constexpr char kEnvNcclAsyncErrorHandling[] = "env-nccl-async-error-handling";
inline constexpr char kEnvNoCachingAllocator[] = "env-no-caching-allocator";
inline constexpr char kGradAliasesGraph[] = "grad-aliases-graph";
inline constexpr char kGradDetached[] = "grad-detached";
inline constexpr char kGraphContract[] = "graph-contract";
inline constexpr char kGraphMemory[] = "graph-memory";
inline constexpr char kGraphReadsFreed[] = "graph-reads-freed";
inline constexpr char kHang[] = "hang";
inline constexpr char kHostValueFrozen[] = "host-value-frozen";
inline constexpr char kLaunchBound[] = "launch-bound";
inline constexpr char kLegacyStreamInCapture[] = "legacy-stream-in-capture";
inline constexpr char kMegatronGraphsNotCreated[] = "megatron-graphs-not-created";
inline constexpr char kNoSpeedup[] = "no-speedup";
inline constexpr char kNumericsForward[] = "numerics-forward";
inline constexpr char kNumericsGrad[] = "numerics-grad";
inline constexpr char kNumericsLoss[] = "numerics-loss";
inline constexpr char kNumericsNonfinite[] = "numerics-nonfinite";
inline constexpr char kOutputOverwritten[] = "output-overwritten";
inline constexpr char kPageableMemcpy[] = "pageable-memcpy";
inline constexpr char kPipelineStepFailed[] = "pipeline-step-failed";
inline constexpr char kRankDivergentCapture[] = "rank-divergent-capture";
inline constexpr char kRankDivergentCollectives[] = "rank-divergent-collectives";
inline constexpr char kRecaptureChurn[] = "recapture-churn";
inline constexpr char kReplayMismatch[] = "replay-mismatch";
inline constexpr char kReplayOrder[] = "replay-order";
inline constexpr char kRngEagerMismatch[] = "rng-eager-mismatch";
inline constexpr char kRngFrozenMask[] = "rng-frozen-mask";
inline constexpr char kRngHostDraw[] = "rng-host-draw";
inline constexpr char kRngInferenceState[] = "rng-inference-state";
inline constexpr char kRngUnregisteredGenerator[] = "rng-unregistered-generator";
inline constexpr char kScheduleOrder[] = "schedule-order";
inline constexpr char kStateElided[] = "state-elided";
inline constexpr char kStateMadeInCapture[] = "state-made-in-capture";
inline constexpr char kStaticInputRebound[] = "static-input-rebound";
inline constexpr char kStderrMessages[] = "stderr-messages";
inline constexpr char kSyncInCapture[] = "sync-in-capture";
inline constexpr char kSyncInRegion[] = "sync-in-region";
inline constexpr char kTraceIncomplete[] = "trace-incomplete";
inline constexpr char kTrainingModeFrozen[] = "training-mode-frozen";
inline constexpr char kUnjoinedStream[] = "unjoined-stream";
inline constexpr char kUnsafeApiInCapture[] = "unsafe-api-in-capture";
inline constexpr char kWarmupInsufficient[] = "warmup-insufficient";

}  // namespace graphcheck::check_id

#endif  // GRAPHCHECK_CORE_CHECK_IDS_H_
