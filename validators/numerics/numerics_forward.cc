#include "validators/numerics/numerics_forward.h"

#include "core/engine_run.h"
#include "validators/numerics/numerics_rule.h"
#include "validators/rng/rng_draws_rule.h"

namespace graphcheck {

const CheckInfo& NumericsForwardCheck::info() const {
  static const CheckInfo kInfo{
      "numerics-forward",
      "The graphed forward computes different outputs than eager",
      Severity::kError,
      CheckArea::kNumerics,
      "On the first step, from identical parameters, inputs and random state, the forward graph's outputs differ "
      "from the eager forward's (bitwise where eager reproduces itself, else beyond eager's own spread).",
      NumericsRuleOptions()};
  return kInfo;
}

void NumericsForwardCheck::CheckEngineRun(const EngineRun& run, const BoundOptions& options,
                                          std::vector<Finding>* findings) const {
  // Outputs drawn differently (rng-frozen-mask, rng-eager-mismatch): that check names the cause.
  const RngDrawVerdict rng = JudgeRngDraws(run);
  if (rng == RngDrawVerdict::kFrozen || rng == RngDrawVerdict::kMismatch) return;
  const NumericsRule rule(run, options);
  const std::vector<SampleMismatch> mismatches = FindMismatches(run, rule, {TensorRole::kOutput});
  if (mismatches.empty()) return;
  Finding finding = NewFinding();
  DescribeMismatches(run, rule, mismatches, TensorRole::kOutput, "forward outputs of the first step", &finding);
  finding.fix =
      "Find what the forward reads on the host: Python numbers or CPU tensors that change per call (they are frozen "
      "at capture), branches on tensor values, parameters or inputs rebound instead of updated in place (copy_), "
      "and generators other than the default one (register them with the graph).";
  findings->push_back(std::move(finding));
}

}  // namespace graphcheck
