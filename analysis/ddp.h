// DistributedDataParallel as the Python probe saw it (format 1.7): each DDP module, the stream it was constructed on,
// and its forwards that ran inside a capture, each tied to the capture window it ran in and to what failed there.
// ddp-default-stream and ddp-warmup-short read it.
#ifndef GRAPHCHECK_ANALYSIS_DDP_H_
#define GRAPHCHECK_ANALYSIS_DDP_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/capture_windows.h"
#include "trace/events.h"
#include "trace/probe_records.h"

namespace graphcheck::analysis {

class TraceAnalysis;  // trace_analysis.h

struct DdpCapturedForward {
  const trace::DdpCapturedForward* record = nullptr;
  std::optional<size_t> window;  // the capture window it ran in
};

struct DdpModule {
  uint64_t id = 0;                                     // the module's Python id
  const trace::DdpConstructed* constructed = nullptr;  // null when the probe did not see the constructor
  std::vector<DdpCapturedForward> captured_forwards;
};

// In order of first appearance.
std::vector<DdpModule> DdpModules(const TraceAnalysis& analysis);

// The eager forwards the module ran before `forward`, the one inside the capture.
inline uint64_t WarmupIterations(const DdpCapturedForward& forward) {
  return forward.record->forwards == 0 ? 0 : forward.record->forwards - 1;
}

// The first capture problem of capture window `window` (of `cause` when given); null when none.
const CaptureProblem* FirstProblemIn(const CaptureAnalysis& captures, size_t window,
                                     std::optional<CaptureCause> cause = std::nullopt);

// The eager iterations with gradient synchronization DDP needs before a capture (ddp-warmup-short's default): its
// reducer times its first ten iterations with CUDA events it synchronizes.
inline constexpr uint64_t kDdpWarmupIterations = 11;

// Whether a DDP check names the cause of capture problem `problem` at the program's line, so that the capture check
// of its cause says nothing more: a DDP forward captured before kDdpWarmupIterations eager ones in its window
// (ddp-warmup-short: whatever failed there), or a DDP module constructed on the default stream whose captured forward
// shares the window of a legacy-stream problem (ddp-default-stream).
bool DdpNamesTheCause(const TraceAnalysis& analysis, const CaptureProblem& problem);

// "cudaEventSynchronize failed with 900 (sync-in-capture)": a problem's first call, for evidence.
std::string DescribeProblem(const trace::Trace& trace, const CaptureProblem& problem);

}  // namespace graphcheck::analysis

#endif  // GRAPHCHECK_ANALYSIS_DDP_H_
