// Iterations (training or inference steps) of one trace, for the eager-region and performance checks: the ranges of
// an NVTX range the user names (`region`), or else the passes of the program's own loop the Python probe marked
// (docs/architecture.md, "Steps and sampled launches"), or else found by repetition of the kernel-launch sequence.
//
// A recorder that sampled launches recorded them only inside its windows: repetition then runs in each window on its
// own, and NVTX steps outside the windows are kept (their synchronizations were recorded) but marked as having
// unrecorded launches.
//
// Repetition: in a step loop every kernel launched once per step is launched as many times as there are steps, so
// the launch count shared by the most distinct kernel names is the number of steps, and the earliest-launched kernel
// with that count marks where each step begins (its launch to its next launch is one step; what comes before the first
// and after the last is left out). A repeated unit of a single launch (a loop of one kernel) is grouped into steps
// of 32 launches. Eager launches and graph launches are detected separately: graph replays that come
// after the last eager step form the graphed steps (anchored on the graph launched most regularly).
#ifndef GRAPHCHECK_ANALYSIS_ITERATIONS_H_
#define GRAPHCHECK_ANALYSIS_ITERATIONS_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "analysis/nvtx_index.h"
#include "trace/events.h"
#include "trace/probe_records.h"

namespace graphcheck::analysis {

struct IterationOptions {
  std::string region;  // NVTX range name; "" = detect by repetition
  size_t first = 1;    // step range [first, last) within eager and within graphed steps
  std::optional<size_t> last;

  std::string Key() const;
};

// "A:B", "A:", ":B" or "A" (just step A), 0-based, B exclusive.
absl::Status ParseStepRange(absl::string_view text, IterationOptions* options);

struct Iteration {
  uint64_t start_ns = 0;  // [start_ns, end_ns)
  uint64_t end_ns = 0;
  size_t first_call = 0;  // api_calls (sorted by start) that began inside: [first_call, end_call)
  size_t end_call = 0;
  size_t index = 0;      // among the eager or the graphed steps, before the step range applies
  bool graphed = false;  // replays a CUDA graph
  // Every launch in the step was recorded with its GPU times (always, unless the recorder sampled launches and the
  // step is not inside one of its windows). Checks that read launches use only these steps.
  bool launches_recorded = true;
};

// The span [start_ns, end_ns) as a step: the API calls that began inside it, on any thread.
Iteration MakeIteration(const trace::Trace& trace, uint64_t start_ns, uint64_t end_ns);

// The steps whose launches were all recorded.
std::vector<Iteration> LaunchRecorded(const std::vector<Iteration>& steps);

struct Iterations {
  std::string source;                // how they were found, for evidence; "" when none were
  bool eager_by_repetition = false;  // the eager steps are a guess from the launch sequence, not NVTX ranges
  std::vector<Iteration> eager;      // selected by the step range
  std::vector<Iteration> graphed;
  // Steps that replay graphs and also launch at least half of those graphs' kernels one by one (an eager reference
  // run beside the replay): neither eager nor graphed steps, left out of both.
  size_t reruns = 0;
};

// The Python probe's own eager work under --shadow (its audit spans: python_probe.h's AuditSpans) is not the
// program's: its launches never anchor steps, and a step that overlaps it is left out of every step list.
Iterations FindIterations(const trace::Trace& trace, const NvtxIndex& nvtx, const trace::ProbeRecords& probe,
                          const IterationOptions& options);

// Whether a region and step range the user asked for select anything, so that a typo is an error rather than a
// silently empty analysis. Counted per trace (CountStepSelection, while each trace is loaded), then judged over all:
// NotFound when `options.region` names no NVTX range in any trace (the message lists the most frequent ranges they
// do hold); OutOfRange when `check_steps` and the step range selects no step of any trace that has steps.
struct StepSelectionCount {
  bool region_seen = false;
  std::vector<std::pair<std::string, size_t>> ranges;  // NVTX range names and counts, when the region was not seen
  size_t steps_found = 0;
  size_t steps_selected = 0;
};
StepSelectionCount CountStepSelection(const trace::Trace& trace, const IterationOptions& options, bool check_steps);
absl::Status JudgeStepSelection(const std::vector<StepSelectionCount>& counts, const IterationOptions& options,
                                bool check_steps);

}  // namespace graphcheck::analysis

#endif  // GRAPHCHECK_ANALYSIS_ITERATIONS_H_
