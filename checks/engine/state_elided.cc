// state-elided: after the same steps, a parameter or buffer holds a different value in the graphed run than in the
// eager run although the first step's outputs and gradients agree: state that the eager code changes outside what the
// graph recorded (a buffer rebound in forward, a counter or CPU scalar copied into the graph once, a running
// statistic updated in Python). Where outputs or gradients already differ, numerics-forward or numerics-grad names
// the cause and this check stays silent.
#include <algorithm>
#include <memory>

#include "absl/strings/str_format.h"
#include "checks/checks.h"
#include "checks/engine/numerics_rule.h"
#include "core/check.h"
#include "core/check_ids.h"
#include "core/plural.h"
#include "engine/run/engine_run.h"

namespace graphcheck::checks {
namespace {

class StateElidedCheck : public CheckOf<EngineRun> {
 public:
  StateElidedCheck();

 protected:
  void Read(const EngineRun& run, const BoundOptions& options, std::vector<Finding>* findings) const override;
};

}  // namespace

StateElidedCheck::StateElidedCheck()
    : CheckOf(CheckInfo{
          check_id::kStateElided, "State that eager steps update and graph replays do not", Severity::kError,
          CheckArea::kState,
          "After the same steps from the same state, a parameter or buffer differs between the eager and the graphed "
          "run while the first step's outputs and gradients agree: the eager code updates it outside what the graph "
          "recorded.",
          NumericsRuleOptions()}) {}

void StateElidedCheck::Read(const EngineRun& run, const BoundOptions& options, std::vector<Finding>* findings) const {
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
  DescribeMismatches(run, rule, mismatches, worst.role, "parameter or buffer after the last step",
                     "parameters and buffers after the last step", &finding);
  size_t frozen = 0;
  for (const SampleMismatch& m : mismatches) frozen += m.sample->changed_in_eager && !m.sample->changed_in_graphed;
  finding.message = absl::StrFormat(
      "The graphed run of %s ends with other values than the eager run in %s, though the first step's outputs and "
      "gradients agree; the worst is %s %s%s.",
      run.model, Plural(mismatches.size(), "parameter or buffer", "parameters and buffers"), TensorRoleName(worst.role),
      worst.name,
      worst.changed_in_eager && !worst.changed_in_graphed ? ", which eager steps change and graph replays never do"
                                                          : "");
  if (frozen > 0) {
    finding.evidence.push_back(absl::StrFormat(
        "changed during eager steps and kept at their initial value through the replays: %d of them", frozen));
  }
  finding.fix =
      "Update state inside the graphed code, in place: `self.buf.add_(1)` or `self.buf.copy_(new)` rather than "
      "`self.buf = self.buf + 1` (a rebound attribute is set once, at capture); keep counters and running statistics "
      "in device tensors; and move updates made in Python between graphed calls into the graphed region.";
  findings->push_back(std::move(finding));
}

std::unique_ptr<Check> NewStateElidedCheck() { return std::make_unique<StateElidedCheck>(); }

}  // namespace graphcheck::checks
