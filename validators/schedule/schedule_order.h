// schedule-order: a capture order for Transformer Engine's make_graphed_callables(_order=...) that TE would reject or
// that captures a backward before its forward: per-chunk forward / backward counts, ids in range, ordering, and the
// counts of callables and sample arguments the order implies.
#ifndef GRAPHCHECK_VALIDATORS_SCHEDULE_SCHEDULE_ORDER_H_
#define GRAPHCHECK_VALIDATORS_SCHEDULE_SCHEDULE_ORDER_H_

#include <vector>

#include "core/check.h"

namespace graphcheck {

class ScheduleOrderCheck : public Check {
 public:
  const CheckInfo& info() const override;
  bool CanRun(const CheckInputs& inputs) const override { return inputs.order != nullptr; }
  void Run(const CheckInputs& inputs, const BoundOptions& options, std::vector<Finding>* findings) const override;
};

}  // namespace graphcheck

#endif  // GRAPHCHECK_VALIDATORS_SCHEDULE_SCHEDULE_ORDER_H_
