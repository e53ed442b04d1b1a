// rng-frozen-mask: outputs that change with every random draw in eager stay the same from one replay to the next. The
// randomness comes from the host (a CPU generator, Python's random, a number drawn per call and passed to a kernel),
// which a graph records once at capture: every replay applies the capture-time mask, shift or noise. Where the probe
// saw the draw itself inside the capture, rng-host-draw names it at the drawing line and this check stays silent: one
// defect, one finding.
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "analysis/trace_analysis.h"
#include "checks/checks.h"
#include "checks/engine/numerics_rule.h"
#include "checks/engine/rng_draws_rule.h"
#include "checks/engine/shadow_verdict.h"
#include "core/check.h"
#include "core/check_ids.h"
#include "trace/events.h"
#include "trace/python_frames.h"

namespace graphcheck::checks {
namespace {

class RngFrozenMaskCheck : public CheckOf<EngineRun, analysis::TraceAnalysis> {
 public:
  RngFrozenMaskCheck();
  // An engine run, or a trace holding --shadow's comparisons.
  bool CanRun(const CheckInputs& inputs) const override;

 protected:
  void Read(const EngineRun* run, const analysis::TraceAnalysis* analysis, const BoundOptions& options,
            std::vector<Finding>* findings) const override;

 private:
  void CheckEngineRun(const EngineRun& run, std::vector<Finding>* findings) const;
  void CheckShadowComparisons(const analysis::TraceAnalysis& analysis, const BoundOptions& options,
                              std::vector<Finding>* findings) const;
};

}  // namespace
namespace {

constexpr char kFix[] =
    "Draw random numbers on the GPU inside the graphed code (torch.rand(..., device=\"cuda\"), torch.bernoulli, "
    "dropout on CUDA tensors, from the default generator or one registered with graph.register_generator_state): a "
    "number or mask drawn on the host (CPU generator, Python's random, numpy) is recorded once at capture.";

// Whether the probe saw, inside a capture, a host draw from one of the sources the verdict's eager runs drew from
// (rng-host-draw's finding, at the drawing line). A region's draw must be in its own graph's capture; a graphed
// module's, in any capture, since the probe does not tie make_graphed_callables' graphs to their module.
bool DrawSeenInCapture(const analysis::TraceAnalysis& analysis, const ShadowVerdict& verdict) {
  for (const trace::HostRandomDraw& draw : analysis.probe().records().host_random_draws) {
    if (verdict.subject == trace::ShadowSubject::kCapturedRegion && draw.graph != verdict.owner) continue;
    const absl::string_view drawn = trace::DrawSourceName(draw.source);
    for (absl::string_view source : absl::StrSplit(verdict.host_draws, ',')) {
      // The shadow calls torch's CPU generator "cpu".
      if (source == drawn || (source == "cpu" && draw.source == trace::DrawSource::kTorchCpu)) return true;
    }
  }
  return false;
}

}  // namespace

RngFrozenMaskCheck::RngFrozenMaskCheck()
    : CheckOf(CheckInfo{
          check_id::kRngFrozenMask, "Replays repeat the random draws made at capture", Severity::kError,
          CheckArea::kRng,
          "The forward, run twice on the same input, gives different outputs in eager (its random draws advance) and "
          "the "
          "same outputs from two replays (graphcheck check), or under `graphcheck run --shadow` a graphed call differs "
          "from its eager code where that code drew random numbers on the host: the graph recorded the draw once.",
          NumericsRuleOptions()}) {}

bool RngFrozenMaskCheck::CanRun(const CheckInputs& inputs) const {
  const trace::Trace* trace = inputs.Find<trace::Trace>();
  return inputs.Find<EngineRun>() != nullptr || (trace != nullptr && !trace->shadow_comparisons.empty());
}

void RngFrozenMaskCheck::Read(const EngineRun* run, const analysis::TraceAnalysis* analysis,
                              const BoundOptions& options, std::vector<Finding>* findings) const {
  if (run != nullptr) CheckEngineRun(*run, findings);
  if (analysis != nullptr) CheckShadowComparisons(*analysis, options, findings);
}

void RngFrozenMaskCheck::CheckShadowComparisons(const analysis::TraceAnalysis& analysis, const BoundOptions& options,
                                                std::vector<Finding>* findings) const {
  const trace::Trace& trace = analysis.trace();
  for (const trace::ShadowSubject subject :
       {trace::ShadowSubject::kModuleForward, trace::ShadowSubject::kCapturedRegion}) {
    for (const ShadowVerdict& verdict : JudgeShadowComparisons(trace, subject, /*host_draws=*/true, options)) {
      if (verdict.differing == 0 || DrawSeenInCapture(analysis, verdict)) continue;
      const trace::ShadowComparison& worst = *verdict.worst;
      const std::string owner(trace.String(worst.module_type));
      const bool module = subject == trace::ShadowSubject::kModuleForward;
      Finding finding = NewFinding();
      finding.message = absl::StrFormat(
          "%s draws random numbers on the host (%s), which a capture records once: every %s reuses the draw made at "
          "capture. Under --shadow, %s %d differs from the eager code run from the same random state (%d of %d "
          "compared differ).",
          module ? absl::StrCat("The forward of ", owner, " (make_graphed_callables)")
                 : absl::StrCat(owner, ", captured", trace::CapturedAt(trace, verdict.owner), ","),
          verdict.host_draws, module ? "graphed call" : "replay", module ? "call" : "replay", worst.call,
          verdict.differing, verdict.compared);
      finding.evidence.push_back(absl::StrCat(
          "the eager run drew from ", verdict.host_draws,
          " (put back before each run, so both eager runs drew the same numbers and the graph its frozen ones)"));
      for (const std::string& line : verdict.table) finding.evidence.push_back(line);
      finding.where.key = owner;
      finding.where.python = trace::PythonFrames(trace, worst.stack);
      finding.fix = kFix;
      findings->push_back(std::move(finding));
    }
  }
}

void RngFrozenMaskCheck::CheckEngineRun(const EngineRun& run, std::vector<Finding>* findings) const {
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
  finding.fix = kFix;
  findings->push_back(std::move(finding));
}

std::unique_ptr<Check> NewRngFrozenMaskCheck() { return std::make_unique<RngFrozenMaskCheck>(); }

}  // namespace graphcheck::checks
