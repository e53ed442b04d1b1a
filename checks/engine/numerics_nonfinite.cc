// numerics-nonfinite: the graphed run produces NaN or Inf where the eager run, from the same state, does not: in a
// loss, an output, a gradient or a parameter. Graphs turn NaN when they read memory that no longer holds what the
// eager code reads (a freed or rebound tensor, a pool reused by another graph).
#include <algorithm>
#include <cmath>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "checks/checks.h"
#include "core/check.h"
#include "core/check_ids.h"
#include "core/plural.h"
#include "engine/run/engine_run.h"

namespace graphcheck::checks {
namespace {

class NumericsNonfiniteCheck : public CheckOf<EngineRun> {
 public:
  NumericsNonfiniteCheck();

 protected:
  void Read(const EngineRun& run, const BoundOptions& options, std::vector<Finding>* findings) const override;
};

}  // namespace

NumericsNonfiniteCheck::NumericsNonfiniteCheck()
    : CheckOf(CheckInfo{check_id::kNumericsNonfinite,
                        "The graphed run produces NaN or Inf where eager does not",
                        Severity::kError,
                        CheckArea::kNumerics,
                        "From the same state, the graphed run's loss, outputs, gradients or parameters hold "
                        "NaN or Inf values that the eager run's do not.",
                        {}}) {}

void NumericsNonfiniteCheck::Read(const EngineRun& run, const BoundOptions&, std::vector<Finding>* findings) const {
  std::vector<std::string> evidence;
  std::string first_tensor;
  for (const NumericsSample& s : run.samples) {
    if (s.graphed_nonfinite <= s.eager_nonfinite) continue;
    if (first_tensor.empty()) first_tensor = s.name;
    evidence.push_back(absl::StrFormat("%s %s: %d of %s NaN or Inf graphed, %d eager", TensorRoleName(s.role), s.name,
                                       s.graphed_nonfinite, Plural(s.numel, "element", "elements"), s.eager_nonfinite));
  }
  const size_t steps = std::min(run.eager_losses.size(), run.graphed_losses.size());
  size_t first_step = steps, bad_steps = 0;
  for (size_t i = 0; i < steps; ++i) {
    if (!std::isfinite(run.eager_losses[i]) || std::isfinite(run.graphed_losses[i])) continue;
    if (first_step == steps) first_step = i;
    ++bad_steps;
  }
  if (evidence.empty() && bad_steps == 0) return;
  Finding finding = NewFinding();
  if (bad_steps > 0) {
    finding.message = absl::StrFormat(
        "The graphed loss of %s is not finite at %d of %s where the eager loss is, first at step %d (graphed %g, "
        "eager %.9g).",
        run.model, bad_steps, Plural(steps, "step", "steps"), first_step, run.graphed_losses[first_step],
        run.eager_losses[first_step]);
  } else {
    finding.message =
        absl::StrFormat("NaN or Inf after the graphed run and not after the eager run in %s of %s, first %s.",
                        Plural(evidence.size(), "tensor", "tensors"), run.model, first_tensor);
  }
  if (evidence.size() > 5) {
    const size_t more = evidence.size() - 5;
    evidence.resize(5);
    evidence.push_back(absl::StrCat("and ", Plural(more, "more tensor", "more tensors")));
  }
  finding.evidence = std::move(evidence);
  finding.where.key = first_tensor.empty() ? run.model : first_tensor;
  finding.fix =
      "The graph reads memory that no longer holds the eager values: inputs or parameters rebound after capture "
      "(copy into the captured tensors instead), outputs of one graph overwritten by another sharing its pool, or "
      "tensors freed while the graph still reads them. Compare with numerics-forward and state-elided findings.";
  findings->push_back(std::move(finding));
}

std::unique_ptr<Check> NewNumericsNonfiniteCheck() { return std::make_unique<NumericsNonfiniteCheck>(); }

}  // namespace graphcheck::checks
