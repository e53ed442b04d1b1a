// numerics-forward: the first graphed step's forward outputs differ from eager's, from the same parameters, inputs
// and random state. The forward graph computes something other than the eager forward: a host value frozen at
// capture, an input or parameter the graph no longer reads, a generator it does not advance.
#ifndef GRAPHCHECK_VALIDATORS_NUMERICS_NUMERICS_FORWARD_H_
#define GRAPHCHECK_VALIDATORS_NUMERICS_NUMERICS_FORWARD_H_

#include "core/check.h"

namespace graphcheck {

class NumericsForwardCheck : public EngineCheck {
 public:
  const CheckInfo& info() const override;

 protected:
  void CheckEngineRun(const EngineRun& run, const BoundOptions& options, std::vector<Finding>* findings) const override;
};

}  // namespace graphcheck

#endif  // GRAPHCHECK_VALIDATORS_NUMERICS_NUMERICS_FORWARD_H_
