// What a step does, for comparing steps: its operations (eager kernel launches, copies and memsets, in launch order),
// a hash of their identity (kernel names, copy kinds: the control flow) and a hash of their sizes (grid, block,
// bytes: the shapes). dynamic-control-flow and dynamic-shape compare steps with the most common one.
#ifndef GRAPHCHECK_ANALYZERS_STEP_SIGNATURES_H_
#define GRAPHCHECK_ANALYZERS_STEP_SIGNATURES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analyzers/iterations.h"
#include "core/trace/events.h"

namespace graphcheck::analyzers {

// Indices of the step's operations into Trace::api_calls.
std::vector<size_t> StepOperations(const trace::Trace& trace, const Iteration& step);

struct StepSignature {
  uint64_t sequence = 0;  // what ran
  uint64_t shapes = 0;    // what ran, with its sizes
};
std::vector<StepSignature> SignSteps(const trace::Trace& trace, const std::vector<Iteration>& steps);

// The most common value among `keys` restricted to the steps in `among`; ties go to the earliest step.
size_t MostCommonStep(const std::vector<uint64_t>& keys, const std::vector<size_t>& among);

bool SameOperation(const trace::ApiCall& a, const trace::ApiCall& b);
bool SameShape(const trace::ApiCall& a, const trace::ApiCall& b);
// "ampere_sgemm_128x64_nn grid (128,1,1) block (256,1,1)" or "cudaMemcpyAsync 4096 bytes".
std::string DescribeOperation(const trace::Trace& trace, const trace::ApiCall& call, bool with_shape);

}  // namespace graphcheck::analyzers

#endif  // GRAPHCHECK_ANALYZERS_STEP_SIGNATURES_H_
