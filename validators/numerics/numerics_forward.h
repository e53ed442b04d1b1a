// numerics-forward: the graphed forward computes other outputs than the eager forward from the same parameters, inputs
// and random state: a host value frozen at capture, an input or parameter the graph no longer reads, a generator it
// does not advance. Two producers: `graphcheck check`'s engine (the first step's outputs, eager against graphed) and,
// in a running program, the Python probe under `graphcheck run --shadow N` (each module graphed by
// make_graphed_callables against its own eager forward on its first N calls, trace::ShadowComparison).
#ifndef GRAPHCHECK_VALIDATORS_NUMERICS_NUMERICS_FORWARD_H_
#define GRAPHCHECK_VALIDATORS_NUMERICS_NUMERICS_FORWARD_H_

#include <vector>

#include "core/check.h"

namespace graphcheck {

class NumericsForwardCheck : public Check {
 public:
  const CheckInfo& info() const override;
  // An engine run, or a trace holding --shadow's comparisons.
  bool CanRun(const CheckInputs& inputs) const override;
  void Run(const CheckInputs& inputs, const BoundOptions& options, std::vector<Finding>* findings) const override;

 private:
  void CheckEngineRun(const EngineRun& run, const BoundOptions& options, std::vector<Finding>* findings) const;
  void CheckShadowComparisons(const trace::Trace& trace, const BoundOptions& options,
                              std::vector<Finding>* findings) const;
};

}  // namespace graphcheck

#endif  // GRAPHCHECK_VALIDATORS_NUMERICS_NUMERICS_FORWARD_H_
