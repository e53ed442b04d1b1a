// The plot data of the HTML report (core/report.h's Timeline) from one trace: every step of the run with its phase
// (warmup, eager, capture, graphed), one representative eager step and one graphed step drawn whole (kernels per
// stream, launch calls), and the distribution of eager kernel durations. Sizes are capped so that a long run's
// report stays small; what was left out is counted.
#ifndef GRAPHCHECK_ANALYSIS_REPORT_TIMELINE_H_
#define GRAPHCHECK_ANALYSIS_REPORT_TIMELINE_H_

#include <cstddef>
#include <optional>

#include "analysis/iterations.h"
#include "core/report.h"

namespace graphcheck::analysis {

class TraceAnalysis;

struct TimelineLimits {
  size_t run_steps = kMaxTimelineRunSteps;    // points of the per-step plot
  size_t kernels_per_step = kMaxStepKernels;  // kernels of a drawn step
  size_t launches_per_step = kMaxStepLaunches;
};

// Empty when the trace has neither steps nor captures. `iterations` is the step range the checks use: eager steps
// it leaves out are labelled warmup, and the drawn steps are taken from within it (the median-length one).
std::optional<Timeline> BuildTimeline(const TraceAnalysis& analysis, const IterationOptions& iterations,
                                      const TimelineLimits& limits = {});

}  // namespace graphcheck::analysis

#endif  // GRAPHCHECK_ANALYSIS_REPORT_TIMELINE_H_
