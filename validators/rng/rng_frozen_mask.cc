#include "validators/rng/rng_frozen_mask.h"

#include "absl/strings/str_format.h"
#include "validators/rng/rng_draws_rule.h"

namespace graphcheck {

const CheckInfo& RngFrozenMaskCheck::info() const {
  static const CheckInfo kInfo{
      "rng-frozen-mask",
      "Replays repeat the random draws made at capture",
      Severity::kError,
      CheckArea::kRng,
      "The forward, run twice on the same input, gives different outputs in eager (its random draws advance) and the "
      "same outputs from two replays: the randomness comes from the host and the graph recorded it once.",
      {}};
  return kInfo;
}

void RngFrozenMaskCheck::CheckEngineRun(const EngineRun& run, const BoundOptions& options,
                                        std::vector<Finding>* findings) const {
  if (JudgeRngDraws(run) != RngDrawVerdict::kFrozen) return;
  const RngDraws& d = *run.rng_draws;
  Finding finding = NewFinding();
  finding.message = absl::StrFormat(
      "Every replay of %s's forward applies the same random draws: two eager calls on the same input differ by up "
      "to %g (outputs up to %g), two replays by %g.",
      run.model, d.eager_redraw, d.output_abs_max, d.graphed_redraw);
  finding.evidence.push_back(
      absl::StrFormat("eager after the same seed, twice: outputs differ by %g (its own noise)", d.eager_reseeded));
  finding.evidence.push_back(absl::StrFormat(
      "an eager forward advanced the default CUDA generator by %u, a replay by %u: the varying draws are not the CUDA "
      "generator's",
      d.eager_offset, d.graphed_offset));
  finding.fix =
      "Draw random numbers on the GPU inside the graphed code (torch.rand, torch.bernoulli, dropout on CUDA tensors, "
      "from the default generator or one registered with graph.register_generator_state): a number or mask drawn on "
      "the host (CPU generator, Python's random, numpy) and passed in is recorded once at capture.";
  findings->push_back(std::move(finding));
}

}  // namespace graphcheck
