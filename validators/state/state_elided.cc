#include "validators/state/state_elided.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "core/engine_run.h"
#include "validators/numerics/numerics_rule.h"

namespace graphcheck {

const CheckInfo& StateElidedCheck::info() const {
  static const CheckInfo kInfo{
      "state-elided",
      "State that eager steps update and graph replays do not",
      Severity::kError,
      CheckArea::kState,
      "After the same steps from the same state, a parameter or buffer differs between the eager and the graphed "
      "run while the first step's outputs and gradients agree: the eager code updates it outside what the graph "
      "recorded.",
      NumericsRuleOptions()};
  return kInfo;
}

void StateElidedCheck::CheckEngineRun(const EngineRun& run, const BoundOptions& options,
                                      std::vector<Finding>* findings) const {
  const NumericsRule rule(run, options);
  // Outputs or gradients that differ change every later state: numerics-forward or numerics-grad names that cause.
  if (!FindMismatches(run, rule, {TensorRole::kOutput, TensorRole::kGradient}).empty()) return;
  std::vector<SampleMismatch> mismatches = FindMismatches(run, rule, {TensorRole::kBuffer, TensorRole::kParameter});
  // Unless eager reproduces itself bitwise, steps amplify its noise (--numerics native on an H100: ResNet-18's
  // parameters after 11 SGD steps differed from the eager run's by more than 4 x the repeat's spread, in 1 of 4 runs
  // of the clean model): a difference in value is then no evidence, a tensor the replays never change is.
  if (!rule.bitwise()) {
    mismatches.erase(std::remove_if(mismatches.begin(), mismatches.end(),
                                    [](const SampleMismatch& m) {
                                      return !(m.sample->changed_in_eager && !m.sample->changed_in_graphed);
                                    }),
                     mismatches.end());
  }
  if (mismatches.empty()) return;
  const NumericsSample& worst = *mismatches.front().sample;
  Finding finding = NewFinding();
  DescribeMismatches(run, rule, mismatches, worst.role, "parameters and buffers after the last step", &finding);
  size_t frozen = 0;
  for (const SampleMismatch& m : mismatches) frozen += m.sample->changed_in_eager && !m.sample->changed_in_graphed;
  finding.message = absl::StrFormat(
      "%d parameters and buffers of %s end the graphed run with other values than the eager run, though the first "
      "step's outputs and gradients agree; the worst is %s %s%s.",
      mismatches.size(), run.model, TensorRoleName(worst.role), worst.name,
      worst.changed_in_eager && !worst.changed_in_graphed ? ", which eager steps change and graph replays never do"
                                                          : "");
  if (frozen > 0) {
    finding.evidence.push_back(absl::StrFormat(
        "%d of them change during eager steps and keep their initial value through the replays", frozen));
  }
  finding.fix =
      "Update state inside the graphed code, in place: `self.buf.add_(1)` or `self.buf.copy_(new)` rather than "
      "`self.buf = self.buf + 1` (a rebound attribute is set once, at capture); keep counters and running statistics "
      "in device tensors; and move updates made in Python between graphed calls into the graphed region.";
  findings->push_back(std::move(finding));
}

}  // namespace graphcheck
