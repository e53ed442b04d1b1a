// replay-mismatch: a replay of the program's own capture leaves other values than the captured code run eagerly. Under
// `graphcheck run --shadow N`, for the first N replays of each of the program's captures, the Python probe runs the
// capture's body (one call or several statements, from the program's source, in a copy of the capturing frame's
// variables) eagerly twice from the state the replay starts from, puts back everything it wrote and every random
// source, replays, and compares every tensor the body wrote (parameters, optimizer state, buffers), every gradient
// and every output (trace::ShadowComparison, subject kCapturedRegion). A difference beyond the numerics rule means
// the graph no longer computes what its code does: a host value baked in at capture, a tensor the program replaced, a
// branch taken differently. Captures whose replays could not be compared are noted with the reason.
#ifndef GRAPHCHECK_VALIDATORS_NUMERICS_REPLAY_MISMATCH_H_
#define GRAPHCHECK_VALIDATORS_NUMERICS_REPLAY_MISMATCH_H_

#include <vector>

#include "core/check.h"

namespace graphcheck {

class ReplayMismatchCheck : public Check {
 public:
  const CheckInfo& info() const override;
  // A trace holding --shadow's comparisons of replays or its notes of replays it could not compare.
  bool CanRun(const CheckInputs& inputs) const override;
  void Run(const CheckInputs& inputs, const BoundOptions& options, std::vector<Finding>* findings) const override;
};

}  // namespace graphcheck

#endif  // GRAPHCHECK_VALIDATORS_NUMERICS_REPLAY_MISMATCH_H_
