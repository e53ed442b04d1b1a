#include "validators/engine/numerics_loss.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/engine_run.h"

namespace graphcheck {
namespace {

// The relative tolerance for the precision the losses were computed in.
double RelativeTolerance(const EngineRun& run, const BoundOptions& options) {
  if (run.compute_dtype == "bfloat16") return options.GetDouble("rtol-bfloat16");
  if (run.compute_dtype == "float16") return options.GetDouble("rtol-float16");
  return options.GetDouble("rtol-float32");
}

}  // namespace

const CheckInfo& NumericsLossCheck::info() const {
  static const CheckInfo kInfo{
      "numerics-loss",
      "Graphed training does not reproduce eager training",
      Severity::kError,
      CheckArea::kNumerics,
      "The same training steps, run eagerly and through the graphs from the same state and seed, give different "
      "losses: the replays compute something other than the eager code.",
      {{"rtol-float32", "1e-2", "relative tolerance when the model computes in float32"},
       {"rtol-bfloat16", "5e-2", "relative tolerance under bf16 autocast"},
       {"rtol-float16", "3e-2", "relative tolerance under fp16 autocast"},
       {"atol", "1e-5", "absolute tolerance added to the relative one"}}};
  return kInfo;
}

void NumericsLossCheck::CheckEngineRun(const EngineRun& run, const BoundOptions& options,
                                       std::vector<Finding>* findings) const {
  const size_t steps = std::min(run.eager_losses.size(), run.graphed_losses.size());
  const double rtol = RelativeTolerance(run, options);
  const double atol = options.GetDouble("atol");
  size_t first_bad = steps, worst = steps, mismatches = 0;
  double worst_excess = 0;
  for (size_t i = 0; i < steps; ++i) {
    const double eager = run.eager_losses[i], graphed = run.graphed_losses[i];
    if (!std::isfinite(eager)) continue;  // eager itself diverged: not a graph problem
    const double allowed = atol + rtol * std::fabs(eager);
    const double excess = std::isfinite(graphed) ? std::fabs(graphed - eager) / allowed : INFINITY;
    if (excess <= 1) continue;
    ++mismatches;
    if (first_bad == steps) first_bad = i;
    if (worst == steps || excess > worst_excess) {
      worst = i;
      worst_excess = excess;
    }
  }
  if (mismatches == 0) return;
  Finding finding = NewFinding();
  const double eager = run.eager_losses[worst], graphed = run.graphed_losses[worst];
  finding.message = absl::StrFormat(
      "%zu of %zu graphed training steps of %s give a different loss than the same eager steps; the first at step "
      "%zu, the worst at step %zu (eager %.6g, graphed %.6g)%s.",
      mismatches, steps, run.model, first_bad, worst, eager, graphed,
      std::isfinite(graphed) ? "" : ": the graphed loss is not finite");
  finding.evidence = {
      absl::StrFormat("both runs start from the same parameters, optimizer state, inputs and seed (%s scope, %s)",
                      run.scope, run.compute_dtype),
      absl::StrFormat("tolerance: %g + %g x |eager loss|", atol, rtol),
      absl::StrFormat("step %zu: eager %.9g, graphed %.9g", first_bad, run.eager_losses[first_bad],
                      run.graphed_losses[first_bad]),
  };
  finding.where.key = run.model;
  finding.fix =
      "Look for values computed on the host inside the graphed code (Python numbers, step counters, schedules, "
      "`if` on tensor values): the graph keeps what they were at capture. Move them into tensors the code updates "
      "in place, register extra generators with the graphs, and keep state updates (buffers, counters) inside "
      "the graphed region.";
  findings->push_back(std::move(finding));
}

}  // namespace graphcheck
