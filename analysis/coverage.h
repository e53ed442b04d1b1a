// CUDA-graph coverage of one trace's steps (core/report.h's Coverage): per step (iterations.h), the kernels and GPU
// time replayed from graphs, split by who made the graphs (the capture window that made each graph and the Python
// probe's origin of it), against the kernels launched one by one; and the largest eager remainders by GPU time, each
// with its call site and, where the trace knows it, why it is not graphed.
//
// Only steps with kernel records count: under sampled launch recording (the default) the steps after the first
// window have launches and replays but no GPU records, and their coverage is not guessed; the scope says which steps
// were counted and which were left out. A replay's GPU time is its graph's GPU span (GraphLaunchActivity); its kernels
// are the distinct graph nodes among the kernel records of its launch, else the graph's node count. An eager kernel's
// GPU time is its own duration.
//
// Why a remainder is not graphed, most specific first: its kernel was launched in a capture that failed (the capture's
// root cause from capture_windows.h, or the Python exception that left it); torch.compile skipped CUDA graphs and the
// kernel is inductor's (triton_*); its grid or block sizes differ from step to step (dynamic shape); a step it runs in
// synchronizes with the host on its thread (sync-in-region); the same kernel is in a graph but runs outside its
// replays here; else it was never captured.
#ifndef GRAPHCHECK_ANALYSIS_COVERAGE_H_
#define GRAPHCHECK_ANALYSIS_COVERAGE_H_

#include <cstddef>
#include <optional>
#include <vector>

#include "analysis/iterations.h"
#include "core/report.h"

namespace graphcheck::analysis {

class TraceAnalysis;

struct CoverageLimits {
  size_t steps = kMaxCoverageSteps;            // per-step rows kept (the totals and metrics use every counted step)
  size_t remainders = kMaxCoverageRemainders;  // largest eager remainders kept
};

// Empty when the trace has no steps. `iterations` is the step selection the checks use.
std::optional<Coverage> ComputeCoverage(const TraceAnalysis& analysis, const IterationOptions& iterations,
                                        const CoverageLimits& limits = {});

// coverage.* metrics (docs/coverage.md): the steps counted and left out, and, over the counted steps, the graphed
// share of kernels and of GPU time, overall and per origin, and the eager GPU time per step (median).
std::vector<Metric> CoverageMetrics(const Coverage& coverage);

}  // namespace graphcheck::analysis

#endif  // GRAPHCHECK_ANALYSIS_COVERAGE_H_
