// What a step does, for comparing steps: its operations (eager kernel launches, copies and memsets, in launch order),
// a hash of their identity (kernel names, copy kinds: the control flow) and a hash of their sizes (grid, block,
// bytes: the shapes). dynamic-control-flow and dynamic-shape compare steps with the most common one.
#ifndef GRAPHCHECK_ANALYSIS_STEP_SIGNATURES_H_
#define GRAPHCHECK_ANALYSIS_STEP_SIGNATURES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/iterations.h"
#include "trace/events.h"

namespace graphcheck::analysis {

// Indices of the step's operations into Trace::api_calls.
std::vector<size_t> StepOperations(const trace::Trace& trace, const Iteration& step);

// One entry per step, by position in the steps given: what ran, and what ran with its sizes.
struct StepSignatures {
  std::vector<uint64_t> sequences;
  std::vector<uint64_t> shapes;
  std::vector<size_t> all;  // 0 .. steps - 1, for MostCommonStep over every step
};
StepSignatures SignSteps(const trace::Trace& trace, const std::vector<Iteration>& steps);

// The most common value among `keys` restricted to the steps in `among`; ties go to the earliest step.
size_t MostCommonStep(const std::vector<uint64_t>& keys, const std::vector<size_t>& among);

// Steps found by repetition are a guess at the program's loop, trusted only when more than half of them, and at least
// 3, launch the most common sequence: warm-up calls or the layers of one forward cut into "steps" are not a loop.
// Steps from NVTX ranges are the program's own word and always trusted.
bool TrustedSteps(const Iterations& iterations, size_t steps, size_t with_common_sequence);

bool SameOperation(const trace::Trace& trace, const trace::ApiCall& a, const trace::ApiCall& b);
bool SameShape(const trace::Trace& trace, const trace::ApiCall& a, const trace::ApiCall& b);
// The first position where two steps' operations (indices into Trace::api_calls) differ by `same`; the shorter
// length when one is a prefix of the other.
size_t FirstDifference(const trace::Trace& trace, const std::vector<size_t>& a, const std::vector<size_t>& b,
                       bool (*same)(const trace::Trace&, const trace::ApiCall&, const trace::ApiCall&));
// "ampere_sgemm_128x64_nn grid (128,1,1) block (256,1,1)" or "cudaMemcpyAsync 4096 bytes".
std::string DescribeOperation(const trace::Trace& trace, const trace::ApiCall& call, bool with_shape);

}  // namespace graphcheck::analysis

#endif  // GRAPHCHECK_ANALYSIS_STEP_SIGNATURES_H_
