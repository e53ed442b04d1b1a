#include "validators/numerics/numerics_forward.h"

#include <map>
#include <string>
#include <utility>

#include "absl/strings/str_format.h"
#include "core/engine_run.h"
#include "core/trace/events.h"
#include "core/trace/python_frames.h"
#include "validators/numerics/numerics_rule.h"
#include "validators/numerics/shadow_verdict.h"
#include "validators/rng/rng_draws_rule.h"

namespace graphcheck {
namespace {

constexpr char kFix[] =
    "Find what the forward reads on the host: Python numbers or CPU tensors that change per call (they are frozen at "
    "capture), branches on tensor values, parameters or inputs rebound instead of updated in place (copy_), and "
    "generators other than the default one (register them with the graph).";

// The Python numbers the module's forward reads that changed after capture (the probe's host-value-changed events):
// the likely cause of a difference, named in the evidence.
std::vector<std::string> ChangedAttributes(const trace::Trace& trace, uint64_t module) {
  std::vector<std::string> lines;
  for (const trace::ProbeEvent& e : trace.probe_events) {
    if (e.kind != trace::ProbeEventKind::kHostValueChanged || e.graph != module ||
        trace.String(e.type) != "module-attribute") {
      continue;
    }
    const double captured = trace::HostValueNumber(e.value), now = trace::HostValueNumber(e.value_now);
    lines.push_back(absl::StrFormat("the forward reads %s, %g at capture and %g later: the graphs keep %g",
                                    trace.String(e.text), captured, now, captured));
  }
  return lines;
}

}  // namespace

const CheckInfo& NumericsForwardCheck::info() const {
  static const CheckInfo kInfo{
      "numerics-forward",
      "The graphed forward computes different outputs than eager",
      Severity::kError,
      CheckArea::kNumerics,
      "From identical parameters, inputs and random state, the forward graph's outputs differ from the eager "
      "forward's (bitwise where eager reproduces itself, else beyond eager's own spread): on `graphcheck check`'s "
      "first step, or on the first calls of a graphed module under `graphcheck run --shadow N`.",
      NumericsRuleOptions()};
  return kInfo;
}

bool NumericsForwardCheck::CanRun(const CheckInputs& inputs) const {
  return inputs.engine != nullptr || (inputs.trace != nullptr && !inputs.trace->shadow_comparisons.empty());
}

void NumericsForwardCheck::Run(const CheckInputs& inputs, const BoundOptions& options,
                               std::vector<Finding>* findings) const {
  if (inputs.engine != nullptr) CheckEngineRun(*inputs.engine, options, findings);
  if (inputs.trace != nullptr) CheckShadowComparisons(*inputs.trace, options, findings);
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
  finding.fix = kFix;
  findings->push_back(std::move(finding));
}

void NumericsForwardCheck::CheckShadowComparisons(const trace::Trace& trace, const BoundOptions& options,
                                                  std::vector<Finding>* findings) const {
  // Forwards that drew on the host compare a frozen draw with a fresh one: rng-frozen-mask names that cause.
  for (const ShadowVerdict& verdict :
       JudgeShadowComparisons(trace, trace::ShadowSubject::kModuleForward, /*host_draws=*/false, options)) {
    if (verdict.differing == 0) continue;
    const trace::ShadowComparison& worst = *verdict.worst;
    const std::string type(trace.String(worst.module_type));
    Finding finding = NewFinding();
    finding.message = absl::StrFormat(
        "The graphed forward of %s (make_graphed_callables) differs from its own eager forward on %d of %d compared "
        "calls; the worst is call %d.",
        type, verdict.differing, verdict.compared, worst.call);
    finding.evidence = {
        "graphcheck run --shadow: right after each graphed call, the module's eager forward ran twice on the same "
        "input, parameters and buffers, with every random source put back to where the graphed call started"};
    for (std::string& line : ChangedAttributes(trace, verdict.owner)) finding.evidence.push_back(std::move(line));
    for (const std::string& line : verdict.table) finding.evidence.push_back(line);
    finding.where.key = type;
    finding.where.python = trace::PythonFrames(trace, worst.stack);
    finding.fix = kFix;
    findings->push_back(std::move(finding));
  }
}

}  // namespace graphcheck
