// numerics-forward: the graphed forward computes other outputs than the eager forward from the same parameters, inputs
// and random state: a host value frozen at capture, an input or parameter the graph no longer reads, a generator it
// does not advance. Two producers: `graphcheck check`'s engine (the first step's outputs, eager against graphed) and,
// in a running program, the Python probe under `graphcheck run --shadow N` (each module graphed by
// make_graphed_callables against its own eager forward on its first N calls, trace::ShadowComparison). Where the
// probe saw a make_graphed_callables capture replace a parameter or buffer, state-made-in-capture names that line and
// this check says nothing more of the graphed forwards: one defect, one finding.
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "analysis/trace_analysis.h"
#include "checks/checks.h"
#include "checks/engine/numerics_rule.h"
#include "checks/engine/rng_draws_rule.h"
#include "checks/engine/shadow_verdict.h"
#include "core/check.h"
#include "core/check_ids.h"
#include "core/plural.h"
#include "engine/run/engine_run.h"
#include "trace/events.h"
#include "trace/python_frames.h"

namespace graphcheck::checks {
namespace {

class NumericsForwardCheck : public CheckOf<EngineRun, analysis::TraceAnalysis> {
 public:
  NumericsForwardCheck();
  // An engine run, or a trace holding --shadow's comparisons.
  bool CanRun(const CheckInputs& inputs) const override;

 protected:
  void Read(const EngineRun* run, const analysis::TraceAnalysis* analysis, const BoundOptions& options,
            std::vector<Finding>* findings) const override;

 private:
  void CheckEngineRun(const EngineRun& run, const BoundOptions& options, std::vector<Finding>* findings) const;
  void CheckShadowComparisons(const analysis::TraceAnalysis& analysis, const BoundOptions& options,
                              std::vector<Finding>* findings) const;
};

}  // namespace
namespace {

constexpr char kFix[] =
    "Find what the forward reads on the host: Python numbers or CPU tensors that change per call (they are frozen at "
    "capture), branches on tensor values, parameters or inputs rebound instead of updated in place (copy_), and "
    "generators other than the default one (register them with the graph).";

// The Python numbers the module's forward reads that changed after capture (the probe's host-value-changed events):
// the likely cause of a difference, named in the evidence.
std::vector<std::string> ChangedAttributes(const trace::ProbeRecords& records, uint64_t module) {
  std::vector<std::string> lines;
  for (const trace::HostValueChange& e : records.host_value_changes) {
    if (e.graph != module || e.role != trace::HostValueRole::kModuleAttribute) continue;
    lines.push_back(absl::StrFormat("the forward reads %s, %g at capture and %g later: the graphs keep %g", e.name,
                                    e.captured, e.now, e.captured));
  }
  return lines;
}

// Whether a make_graphed_callables capture replaced a module's parameter or buffer (state-made-in-capture's finding):
// the graphed forward then reads the tensor it replaced. The probe does not tie make_graphed_callables' graphs to their
// module, so any graphed module's difference is taken for it.
bool StateReplacedInAGraphedCapture(const trace::ProbeRecords& records) {
  for (const trace::StateMadeInCapture& e : records.state_made_in_capture) {
    if (e.at.origin == trace::ProbeOrigin::kGraphedCallables && e.role != trace::MadeStateRole::kOptimizerState) {
      return true;
    }
  }
  return false;
}

}  // namespace

NumericsForwardCheck::NumericsForwardCheck()
    : CheckOf(CheckInfo{
          check_id::kNumericsForward, "The graphed forward computes different outputs than eager", Severity::kError,
          CheckArea::kNumerics,
          "From identical parameters, inputs and random state, the forward graph's outputs differ from the eager "
          "forward's (bitwise where eager reproduces itself, else beyond eager's own spread): on `graphcheck check`'s "
          "first step, or on the first calls of a graphed module under `graphcheck run --shadow N`.",
          NumericsRuleOptions()}) {}

bool NumericsForwardCheck::CanRun(const CheckInputs& inputs) const {
  const trace::Trace* trace = inputs.Find<trace::Trace>();
  return inputs.Find<EngineRun>() != nullptr || (trace != nullptr && !trace->shadow_comparisons.empty());
}

void NumericsForwardCheck::Read(const EngineRun* run, const analysis::TraceAnalysis* analysis,
                                const BoundOptions& options, std::vector<Finding>* findings) const {
  if (run != nullptr) CheckEngineRun(*run, options, findings);
  if (analysis != nullptr) CheckShadowComparisons(*analysis, options, findings);
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
  DescribeMismatches(run, rule, mismatches, TensorRole::kOutput, "forward output of the first step",
                     "forward outputs of the first step", &finding);
  finding.fix = kFix;
  findings->push_back(std::move(finding));
}

void NumericsForwardCheck::CheckShadowComparisons(const analysis::TraceAnalysis& analysis, const BoundOptions& options,
                                                  std::vector<Finding>* findings) const {
  const trace::Trace& trace = analysis.trace();
  if (StateReplacedInAGraphedCapture(analysis.probe().records())) return;
  // Forwards that drew on the host compare a frozen draw with a fresh one: rng-frozen-mask names that cause.
  for (const ShadowVerdict& verdict :
       JudgeShadowComparisons(trace, trace::ShadowSubject::kModuleForward, /*host_draws=*/false, options)) {
    if (verdict.differing == 0) continue;
    const trace::ShadowComparison& worst = *verdict.worst;
    const std::string type(trace.String(worst.module_type));
    Finding finding = NewFinding();
    finding.message = absl::StrFormat(
        "The graphed forward of %s (make_graphed_callables) differs from its own eager forward on %d of %s; the "
        "worst is call %d.",
        type, verdict.differing, Plural(verdict.compared, "compared call", "compared calls"), worst.call);
    finding.evidence = {
        "graphcheck run --shadow: right after each graphed call, the module's eager forward ran twice on the same "
        "input, parameters and buffers, with every random source put back to where the graphed call started"};
    for (std::string& line : ChangedAttributes(analysis.probe().records(), verdict.owner))
      finding.evidence.push_back(std::move(line));
    for (const std::string& line : verdict.table) finding.evidence.push_back(line);
    finding.where.key = type;
    finding.where.python = trace::PythonFrames(trace, worst.stack);
    finding.fix = kFix;
    findings->push_back(std::move(finding));
  }
}

std::unique_ptr<Check> NewNumericsForwardCheck() { return std::make_unique<NumericsForwardCheck>(); }

}  // namespace graphcheck::checks
