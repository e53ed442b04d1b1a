// Registration of the trace analyzers: every check of the catalog, once, with its area.
#include "analyzers/analyzer_checks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace graphcheck {
namespace {

TEST(AnalyzerChecksTest, RegistersEveryAnalyzerOnce) {
  CheckRegistry registry;
  ASSERT_TRUE(RegisterAnalyzerChecks(&registry).ok());
  std::vector<std::string> ids;
  for (const Check* check : registry.All()) ids.push_back(check->info().id);
  EXPECT_THAT(ids, ::testing::ElementsAre(
                       "address-drift", "alloc-in-capture", "capture-error", "compile-cudagraph-skipped", "cupti-busy",
                       "ddp-default-stream", "ddp-warmup-short", "dynamic-control-flow", "dynamic-shape", "empty-graph",
                       "grad-detached", "graph-memory", "hang", "host-value-frozen", "launch-bound",
                       "legacy-stream-in-capture", "megatron-graphs-not-created", "no-speedup", "output-overwritten",
                       "pageable-memcpy", "rank-divergent-capture", "recapture-churn", "replay-order",
                       "rng-inference-state", "rng-unregistered-generator", "static-input-rebound", "stderr-messages",
                       "sync-in-capture", "sync-in-region", "trace-incomplete", "unjoined-stream",
                       "unsafe-api-in-capture", "warmup-insufficient"));
  // A second registration into the same registry is refused, not silently doubled.
  EXPECT_EQ(RegisterAnalyzerChecks(&registry).code(), absl::StatusCode::kAlreadyExists);
}

}  // namespace
}  // namespace graphcheck
