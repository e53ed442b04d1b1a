// rng-eager-mismatch: the replays draw new random numbers, but not the ones eager draws after the same seed: a forward
// replay advances the default CUDA generator by another amount than an eager forward (code that draws only when not
// capturing, or draws at capture that replays do not repeat), so dropout masks and noise differ from eager's.
#include <memory>

#include "absl/strings/str_format.h"
#include "checks/checks.h"
#include "checks/engine/rng_draws_rule.h"
#include "core/check.h"
#include "core/check_ids.h"

namespace graphcheck::checks {
namespace {

class RngEagerMismatchCheck : public CheckOf<EngineRun> {
 public:
  RngEagerMismatchCheck();

 protected:
  void Read(const EngineRun& run, const BoundOptions& options, std::vector<Finding>* findings) const override;
};

}  // namespace

RngEagerMismatchCheck::RngEagerMismatchCheck()
    : CheckOf(CheckInfo{
          check_id::kRngEagerMismatch,
          "Replays draw other random numbers than eager from the same seed",
          Severity::kError,
          CheckArea::kRng,
          "After the same seed, the first forward replay's outputs differ from the eager forward's, and a replay "
          "advances "
          "the default CUDA generator by another amount than an eager forward: the graph consumes random numbers "
          "differently from the code it was captured from.",
          {}}) {}

void RngEagerMismatchCheck::Read(const EngineRun& run, const BoundOptions& options,
                                 std::vector<Finding>* findings) const {
  if (JudgeRngDraws(run) != RngDrawVerdict::kMismatch) return;
  const RngDraws& d = *run.rng_draws;
  Finding finding = NewFinding();
  finding.message = absl::StrFormat(
      "From the same seed, %s's first forward replay draws other random numbers than eager: an eager forward "
      "advances the CUDA generator by %u, a replay by %u, and the outputs differ by up to %g (outputs up to %g).",
      run.model, d.eager_offset, d.graphed_offset, d.graphed_vs_eager, d.output_abs_max);
  finding.evidence.push_back(absl::StrFormat(
      "eager twice on the same input: outputs differ by %g (they depend on random draws); after the same seed by %g",
      d.eager_redraw, d.eager_reseeded));
  finding.fix =
      "Make the graphed code draw exactly what the eager code draws: no random calls that run only when not "
      "capturing (or only while capturing, such as a warmup draw), and every generator the forward draws from "
      "registered with the graph. Then a seed gives the same masks eagerly and graphed, and checkpoints resume "
      "reproducibly.";
  findings->push_back(std::move(finding));
}

std::unique_ptr<Check> NewRngEagerMismatchCheck() { return std::make_unique<RngEagerMismatchCheck>(); }

}  // namespace graphcheck::checks
