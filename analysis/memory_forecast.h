// The memory forecast: what a CUDA graph of the program's step would hold in its private memory pool, forecast from
// an eager run before anything is captured. A capture into a private pool keeps every block the captured code
// allocated, for as long as the graph lives; blocks freed inside the capture are reused by its later allocations. So
// the pool is what PyTorch's caching allocator grows a fresh pool to while it serves the step's own allocations and
// frees, in order. The step's allocations come from the allocator's history (trace::Trace::allocations, recorded by
// the Python probe); this replays them through a model of the allocator's defaults: sizes rounded up to 512 bytes,
// requests of at most 1 MiB served from 2 MiB segments, larger ones from 20 MiB segments (below 10 MiB) or their own
// segment rounded up to 2 MiB, best fit, blocks split when the rest is at least 512 bytes (small) or more than 1 MiB
// (large), neighbours merged when freed.
//
// The region is the step (--region, or the steps found by repetition), or the graphable ranges inside it
// (LaunchModel::graphable_range, as the launch forecast reads them): then each range in its own pool, and all of them
// sharing one pool (torch.cuda.graph(pool=...), one make_graphed_callables call), which reuses what one range freed
// for the next. The figure is the largest over the eager steps the history covers, plus the cuBLAS workspaces that
// the first capture on a stream allocates (MemoryForecast::workspace_bytes).
#ifndef GRAPHCHECK_ANALYSIS_MEMORY_FORECAST_H_
#define GRAPHCHECK_ANALYSIS_MEMORY_FORECAST_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/iterations.h"
#include "analysis/launch_metrics.h"
#include "analysis/nvtx_index.h"
#include "core/report.h"
#include "trace/events.h"

namespace graphcheck::analysis {

class TraceAnalysis;

// One pool serving the allocations made inside some regions, and their frees up to the end of the last region.
struct PoolForecast {
  uint64_t pool_bytes = 0;       // the segments the pool grows to
  uint64_t live_peak_bytes = 0;  // the most the regions' blocks held at once
  uint64_t outliving_bytes = 0;  // what they allocated and had not freed when the last region ended (outputs, grads)
};

// `regions`: sorted by start, disjoint. `events`: sorted by time (as a trace holds them).
PoolForecast ForecastPool(const std::vector<trace::AllocatorEvent>& events, const std::vector<TimeInterval>& regions);

// Graphs captured one after another into one pool (torch.cuda.graph(..., pool=...)), in `captures`' order, which
// need not be the trace's: each capture serves the allocations and frees its interval holds, and what it leaves
// allocated stays with its graph (its outputs), while what it freed is there for the next capture. `events`: sorted
// by time.
PoolForecast ForecastCapturesIntoOnePool(const std::vector<trace::AllocatorEvent>& events,
                                         const std::vector<TimeInterval>& captures);

struct MemoryForecast {
  size_t steps = 0;   // eager steps the allocator history covers
  size_t parts = 0;   // graphable ranges per step (0: the step is graphed whole)
  PoolForecast pool;  // the step's own allocations: the step, or all its graphable ranges in one shared pool
  uint64_t private_pools_bytes = 0;  // parts >= 2: each range in its own pool, summed (workspaces not included)
  // cuBLAS keeps a workspace per stream, and a capture runs on a stream of its own: the first graph captured on it
  // allocates the workspaces in its pool (CublasWorkspaceBytes). Seen on an H100 (bench/memory_forecast.py): two
  // blocks of 32 MiB in the pool of every whole-step training graph, the whole of what the model lacked.
  uint64_t workspace_bytes = 0;

  uint64_t PoolBytes() const { return pool.pool_bytes + workspace_bytes; }
  uint64_t PrivatePoolsBytes() const { return private_pools_bytes + workspace_bytes; }
};

// What the cuBLAS workspaces a capture stream gets take: PyTorch 2.11 keeps one workspace per (cuBLAS handle, stream),
// and a handle per thread, so the first capture on a stream allocates one in its pool for each thread that launches
// cuBLAS kernels inside `regions` (sorted by start, disjoint): the forward's thread, and autograd's for a backward
// (one, of a thread unknown, where cuBLAS kernels ran there but their launches were not recorded).
// 32 MiB each on compute capability 9.0 and later; below 9.0 the default CUBLAS_WORKSPACE_CONFIG, ":4096:2:16:8"
// (8 MiB and 128 KiB), not measured. Seen: two 32 MiB blocks in each whole-step training graph's pool on an H100
// (bench/memory_forecast.py), one in an inference loop's shared pool on an H200 (bench/capture_plan). 0 when no
// cuBLAS kernel was launched there.
uint64_t CublasWorkspaceBytes(const TraceAnalysis& analysis, const std::vector<TimeInterval>& regions);

// nullopt when the trace has no allocator history or it covers no eager step.
std::optional<MemoryForecast> ForecastGraphMemory(const TraceAnalysis& analysis, const IterationOptions& steps,
                                                  const LaunchModel& model);

std::vector<Metric> MemoryForecastMetrics(const MemoryForecast& forecast);

// Bytes as the memory findings write them: "706 MiB".
std::string MibText(uint64_t bytes);

}  // namespace graphcheck::analysis

#endif  // GRAPHCHECK_ANALYSIS_MEMORY_FORECAST_H_
