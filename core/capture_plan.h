// `graphcheck plan`'s result: for each region of an eager run whose input shapes vary, the sizes seen and two or three
// sets of shape buckets to capture, each with what it covers, wastes in padding, holds in pool memory, costs at
// start-up and saves. Made by analysis/capture_plan.cc from a trace recorded with `graphcheck run --plan`, rendered
// by report/capture_plan.cc.
#ifndef GRAPHCHECK_CORE_CAPTURE_PLAN_H_
#define GRAPHCHECK_CORE_CAPTURE_PLAN_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace graphcheck {

// One size of the bucketed dimension, over the calls that had it. Times in microseconds, medians over the calls.
struct PlanSize {
  int64_t size = 0;
  size_t calls = 0;
  double eager_us = 0;           // the call's time: the longer of its host span and its kernels' GPU span
  double gpu_busy_us = 0;        // its kernels' busy time (from calls whose launches were recorded; else a neighbour's)
  double nodes = 0;              // kernels, copies and memsets: a graph's nodes
  bool measured = false;         // false: no call of this size had its launches recorded; GPU figures from a neighbour
  uint64_t pool_bytes = 0;       // the private pool a graph of this size would grow (0: no allocator history)
  uint64_t outliving_bytes = 0;  // of it, what the call left allocated (its outputs): kept in a shared pool
};

struct BucketSet {
  std::string name;                  // "few", "balanced", "many"
  std::vector<int64_t> buckets;      // ascending; a call runs in the smallest bucket not below its size
  double calls_covered = 0;          // share of the region's calls that fit a bucket (the rest run eagerly)
  double padding_gpu_us = 0;         // GPU time spent on padding, summed over the covered calls of the run
  double padding_share = 0;          // of the covered calls' own GPU time
  uint64_t private_pools_bytes = 0;  // a pool per bucket, the cuBLAS workspaces in the first
  uint64_t shared_pool_bytes = 0;    // one pool, largest bucket captured first, with the workspaces
  double capture_us = 0;             // start-up: the first capture's one-time work, then per bucket warmup calls,
                                     // the capture and the instantiation
  double saving_per_call_us = 0;     // mean over every call of the region (an uncovered call saves nothing)
  double saving_per_step_us = 0;     // saving_per_call_us x the region's calls per step
  double saving_share = 0;           // of the region's eager time
  double net_saving_us = 0;          // over this run: the savings less the start-up capture time
};

struct RegionPlan {
  std::string region;  // "GPT2LMHeadModel at serve.py:42"
  size_t calls = 0;
  double calls_per_step = 1;  // calls per NVTX step; 1 when the trace has no steps
  // The input dimension the buckets pad ("0 dim 0", "input_ids dim 1"); empty when every call had the same shapes.
  std::string dimension;
  std::vector<std::string> padded_to_max;  // other dimensions that vary, padded to their largest size in every bucket
  std::vector<PlanSize> sizes;             // ascending
  std::vector<BucketSet> sets;             // few, balanced, many (fewer when there are few sizes)
  bool pays_off = false;
  std::string verdict;  // one sentence: which set, or why graphs will not pay off
};

struct CapturePlan {
  std::string subject;              // the trace or folder planned from
  std::vector<RegionPlan> regions;  // by eager time, largest first
  std::vector<std::string> notes;   // what the plan could not measure, and the model it used
  std::vector<std::string> model;   // the constants of the cost model, one per line
};

}  // namespace graphcheck

#endif  // GRAPHCHECK_CORE_CAPTURE_PLAN_H_
