// What `graphcheck run --shadow`'s comparisons (trace::ShadowComparison) say, grouped the way the checks report them:
// per compared module or graph, each compared call or replay judged with the numerics rule. Shared by
// numerics-forward (graphed modules' forwards), numerics-grad (their backwards and what they accumulate into .grad),
// replay-mismatch (replays of the program's own captures) and rng-frozen-mask (a forward or a replay whose eager run
// drew random numbers on the host, which a capture freezes).
#ifndef GRAPHCHECK_CHECKS_ENGINE_SHADOW_VERDICT_H_
#define GRAPHCHECK_CHECKS_ENGINE_SHADOW_VERDICT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/check.h"
#include "trace/events.h"

namespace graphcheck::checks {

struct ShadowVerdict {
  uint64_t owner = 0;  // the module's or graph's id
  trace::ShadowSubject subject = trace::ShadowSubject::kModuleForward;
  int compared = 0;        // calls or replays compared
  int differing = 0;       // of them, with a tensor beyond the rule
  std::string host_draws;  // the host sources the eager runs drew from ("cpu", ...), comma-separated; "" none
  const trace::ShadowComparison* worst = nullptr;  // the first record of the worst differing call
  int worst_tensors = 0;                           // tensors compared in that call
  int worst_differing = 0;                         // of them, beyond the rule
  std::string worst_name;                          // the worst tensor of that call
  std::vector<std::string> table;                  // that call's rule and mismatch table
};

// The verdicts on the comparisons of `subject` whose eager runs drew on the host (`host_draws`) or did not, one per
// module or graph in the order of their first comparison. Records of traces before 1.8 marked `random` (the eager
// forward drew from the CUDA generator and nothing was compared) are left out.
std::vector<ShadowVerdict> JudgeShadowComparisons(const trace::Trace& trace, trace::ShadowSubject subject,
                                                  bool host_draws, const BoundOptions& options);

// The host sources among a comparison's draws: "cpu", "python-random", "numpy"; "" when none.
std::string HostDraws(const trace::Trace& trace, const trace::ShadowComparison& comparison);

}  // namespace graphcheck::checks

#endif  // GRAPHCHECK_CHECKS_ENGINE_SHADOW_VERDICT_H_
