// numerics-nonfinite: the graphed run produces NaN or Inf where the eager run, from the same state, does not: in a
// loss, an output, a gradient or a parameter. Graphs turn NaN when they read memory that no longer holds what the
// eager code reads (a freed or rebound tensor, a pool reused by another graph).
#ifndef GRAPHCHECK_VALIDATORS_NUMERICS_NUMERICS_NONFINITE_H_
#define GRAPHCHECK_VALIDATORS_NUMERICS_NUMERICS_NONFINITE_H_

#include "core/check.h"

namespace graphcheck {

class NumericsNonfiniteCheck : public EngineCheck {
 public:
  const CheckInfo& info() const override;

 protected:
  void CheckEngineRun(const EngineRun& run, const BoundOptions& options, std::vector<Finding>* findings) const override;
};

}  // namespace graphcheck

#endif  // GRAPHCHECK_VALIDATORS_NUMERICS_NUMERICS_NONFINITE_H_
