// numerics-loss: graphed training does not follow eager training. The engine runs the same steps from the same
// parameters, optimizer state, inputs and random seed, eagerly (twice) and through the graphs; the losses are compared
// by the numerics rule (checks/engine/numerics_rule.h). It reports what the per-tensor checks cannot see: when a
// sampled output, gradient or state tensor already differs (numerics-forward, numerics-grad, state-elided) or turned
// non-finite (numerics-nonfinite), that finding names the cause and this one stays silent.
#include <algorithm>
#include <cmath>
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

class NumericsLossCheck : public CheckOf<EngineRun> {
 public:
  NumericsLossCheck();

 protected:
  void Read(const EngineRun& run, const BoundOptions& options, std::vector<Finding>* findings) const override;
};

}  // namespace
namespace {

// Whether a per-tensor numerics check has a finding on this run: then it names the cause.
bool ExplainedBySamples(const EngineRun& run, const NumericsRule& rule) {
  const bool nonfinite = std::any_of(run.samples.begin(), run.samples.end(),
                                     [](const NumericsSample& s) { return s.graphed_nonfinite > s.eager_nonfinite; });
  return nonfinite ||
         !FindMismatches(run, rule,
                         {TensorRole::kOutput, TensorRole::kGradient, TensorRole::kParameter, TensorRole::kBuffer})
              .empty();
}

}  // namespace

NumericsLossCheck::NumericsLossCheck()
    : CheckOf(CheckInfo{
          check_id::kNumericsLoss, "Graphed training does not reproduce eager training", Severity::kError,
          CheckArea::kNumerics,
          "The same training steps, run eagerly and through the graphs from the same state and seed, give different "
          "losses (bitwise where eager reproduces itself, else beyond eager's own run-to-run spread): the replays "
          "compute something other than the eager code.",
          NumericsRuleOptions()}) {}

void NumericsLossCheck::Read(const EngineRun& run, const BoundOptions& options, std::vector<Finding>* findings) const {
  const NumericsRule rule(run, options);
  if (ExplainedBySamples(run, rule)) return;
  const size_t steps = std::min(run.eager_losses.size(), run.graphed_losses.size());
  size_t first_bad = steps, worst = steps, mismatches = 0;
  double worst_excess = 0;
  // Trajectories diverge chaotically, and one repeat is one sample of how fast: the largest spread of the whole run
  // bounds every step. Seen on an H100 (torchvision's ResNet-18, --numerics native): graphed 0.0018 from eager at step
  // 6, where the repeat was 0.0002 from it, a spread the repeat itself reached (0.0013) by the last step.
  double spread = -1;
  for (size_t i = 0; i < steps && i < run.eager_repeat_losses.size(); ++i) {
    if (std::isfinite(run.eager_repeat_losses[i]) && std::isfinite(run.eager_losses[i])) {
      spread = std::max(spread, std::fabs(run.eager_repeat_losses[i] - run.eager_losses[i]));
    }
  }
  for (size_t i = 0; i < steps; ++i) {
    const double eager = run.eager_losses[i], graphed = run.graphed_losses[i];
    // Eager itself diverged (not a graph problem), or graphed is not finite (numerics-nonfinite's finding).
    if (!std::isfinite(eager) || !std::isfinite(graphed)) continue;
    const double allowed = rule.Allowed(eager, spread);
    const double difference = std::fabs(graphed - eager);
    if (!(difference > allowed)) continue;
    const double excess = Excess(difference, allowed, eager);
    ++mismatches;
    if (first_bad == steps) first_bad = i;
    if (worst == steps || excess > worst_excess) {
      worst = i;
      worst_excess = excess;
    }
  }
  if (mismatches == 0) return;
  Finding finding = NewFinding();
  finding.message = absl::StrFormat(
      "The graphed training steps of %s give a different loss than the same eager steps at %zu of %s; the first at "
      "step %zu, the worst at step %zu (eager %.9g, graphed %.9g).",
      run.model, mismatches, Plural(steps, "step", "steps"), first_bad, worst, run.eager_losses[worst],
      run.graphed_losses[worst]);
  finding.evidence = {
      absl::StrFormat("both runs start from the same parameters, optimizer state, inputs and seed (%s scope, %s)",
                      run.scope, run.compute_dtype),
      rule.Describe(),
      absl::StrFormat("step %zu: eager %.9g, graphed %.9g", first_bad, run.eager_losses[first_bad],
                      run.graphed_losses[first_bad]),
  };
  if (!run.eager_repeat_losses.empty() && first_bad < run.eager_repeat_losses.size()) {
    finding.evidence.push_back(
        absl::StrFormat("step %zu of the eager repeat: %.9g", first_bad, run.eager_repeat_losses[first_bad]));
  }
  finding.where.key = run.model;
  finding.fix =
      "Look for values computed on the host inside the graphed code (Python numbers, step counters, schedules, "
      "`if` on tensor values): the graph keeps what they were at capture. Move them into tensors the code updates "
      "in place, register extra generators with the graphs, and keep state updates (buffers, counters) inside "
      "the graphed region.";
  findings->push_back(std::move(finding));
}

std::unique_ptr<Check> NewNumericsLossCheck() { return std::make_unique<NumericsLossCheck>(); }

}  // namespace graphcheck::checks
