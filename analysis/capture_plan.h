// `graphcheck plan`: which shapes to capture, from an eager run whose shapes vary (recorded with `graphcheck run
// --plan`). Each region is one module the program called from no other module's forward; its calls, with their input
// shapes (the probe's module-call events), are measured like steps (launch_metrics.h: host span, kernels' GPU busy
// time, nodes) and their allocations replayed through the pool model (memory_forecast.h). The dimension with the most
// sizes is bucketed; other dimensions that vary are padded to their largest size. Bucket sets of increasing count are
// chosen to waste the least padding GPU time (each bucket is a size seen, so its time is measured), and each set is
// costed with the launch model: a covered call of size s in bucket b takes max(one graph launch, b's GPU busy time +
// its nodes x the node cost + one graph launch), where it took its eager time.
#ifndef GRAPHCHECK_ANALYSIS_CAPTURE_PLAN_H_
#define GRAPHCHECK_ANALYSIS_CAPTURE_PLAN_H_

#include <vector>

#include "absl/status/statusor.h"
#include "analysis/launch_model.h"
#include "core/capture_plan.h"
#include "trace/events.h"

namespace graphcheck::analysis {

struct PlanModel {
  LaunchModel launch;
  // Start-up per bucket: the eager warmup calls before a capture (torch.cuda.make_graphed_callables runs 3), the
  // capture itself (about one eager call of host time), torch.cuda.graph's own work, and the instantiation per node.
  int warmup_calls = 3;
  double instantiate_node_us = 2.0;
  double capture_fixed_us = 400;
  // Once per set: the first capture empties the cache the program's eager calls built up and allocates the pool's
  // segments and cuBLAS's workspace. A 2-layer GPT-2's bucket set on an H200 (bench/capture_plan, torch 2.11, whose
  // torch.cuda.graph no longer runs gc.collect() by default): the first capture took 54.4 ms, the next three 2.0 to
  // 2.3 ms, each 0.4 to 0.5 ms above its size's eager call.
  double capture_first_us = 50000;
  // Calls above this quantile of the sizes run eagerly: one outlier does not set the largest bucket.
  double covered_quantile = 0.99;
  // "balanced": the fewest buckets whose padding is at most this share of the covered calls' GPU time.
  double balanced_padding_share = 0.05;
  size_t few_buckets = 2;
  size_t many_buckets = 16;
};

// InvalidArgument (bad input, exit 2) when no trace holds module calls (recorded without --plan).
absl::StatusOr<CapturePlan> PlanCaptures(const std::vector<const trace::Trace*>& traces, const PlanModel& model);

}  // namespace graphcheck::analysis

#endif  // GRAPHCHECK_ANALYSIS_CAPTURE_PLAN_H_
