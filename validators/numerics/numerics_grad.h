// numerics-grad: the first graphed step's parameter gradients differ from eager's while its forward outputs agree:
// the backward graph computes something else (a backward hook or a custom autograd function frozen at capture,
// gradients accumulated into a tensor the graph no longer writes). Where the outputs already differ, numerics-forward
// names the cause and this check stays silent.
#ifndef GRAPHCHECK_VALIDATORS_NUMERICS_NUMERICS_GRAD_H_
#define GRAPHCHECK_VALIDATORS_NUMERICS_NUMERICS_GRAD_H_

#include "core/check.h"

namespace graphcheck {

class NumericsGradCheck : public EngineCheck {
 public:
  const CheckInfo& info() const override;

 protected:
  void CheckEngineRun(const EngineRun& run, const BoundOptions& options, std::vector<Finding>* findings) const override;
};

}  // namespace graphcheck

#endif  // GRAPHCHECK_VALIDATORS_NUMERICS_NUMERICS_GRAD_H_
