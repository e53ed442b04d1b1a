#include "validators/numerics/numerics_forward.h"

#include <map>
#include <string>
#include <utility>

#include "absl/strings/str_format.h"
#include "core/engine_run.h"
#include "core/trace/events.h"
#include "core/trace/python_frames.h"
#include "validators/numerics/numerics_rule.h"
#include "validators/rng/rng_draws_rule.h"

namespace graphcheck {
namespace {

constexpr char kFix[] =
    "Find what the forward reads on the host: Python numbers or CPU tensors that change per call (they are frozen at "
    "capture), branches on tensor values, parameters or inputs rebound instead of updated in place (copy_), and "
    "generators other than the default one (register them with the graph).";

// One graphed call's outputs as numerics samples, named "Block output 0".
std::vector<NumericsSample> CallOutputs(const trace::Trace& trace,
                                        const std::vector<const trace::ShadowComparison*>& call) {
  std::vector<NumericsSample> samples;
  for (const trace::ShadowComparison* c : call) {
    NumericsSample& s = samples.emplace_back();
    static_cast<NumericsFigures&>(s) = *c;
    s.name = std::string(trace.String(c->name));
    s.role = TensorRole::kOutput;
    s.dtype = std::string(trace.String(c->dtype));
  }
  return samples;
}

// What one graphed module's compared calls showed.
struct ModuleVerdict {
  int calls = 0;      // compared (not random)
  int differing = 0;  // with an output beyond the rule
  double worst_excess = 0;
  const trace::ShadowComparison* worst = nullptr;  // the first output of the worst call
  std::vector<std::string> table;                  // that call's rule and mismatch table
};

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
  // module -> call -> its outputs, in the order compared. Calls whose eager forward drew random numbers compare
  // different draws: not judged here (the RNG checks of `graphcheck check` are).
  std::map<uint64_t, std::map<uint32_t, std::vector<const trace::ShadowComparison*>>> calls;
  for (const trace::ShadowComparison& c : trace.shadow_comparisons) {
    if (!c.random) calls[c.module][c.call].push_back(&c);
  }
  for (const auto& [module, module_calls] : calls) {
    ModuleVerdict verdict;
    for (const auto& [call, outputs] : module_calls) {
      const std::vector<NumericsSample> samples = CallOutputs(trace, outputs);
      const NumericsRule rule(trace.String(outputs.front()->precision), samples, options);
      const std::vector<SampleMismatch> mismatches = FindMismatches(samples, rule, {TensorRole::kOutput});
      ++verdict.calls;
      if (mismatches.empty()) continue;
      ++verdict.differing;
      if (verdict.worst != nullptr && !(mismatches.front().excess > verdict.worst_excess)) continue;
      verdict.worst_excess = mismatches.front().excess;
      verdict.worst = outputs.front();
      verdict.table = {rule.Describe()};
      for (std::string& line : MismatchTable(mismatches, 5)) verdict.table.push_back(std::move(line));
    }
    if (verdict.differing == 0) continue;
    const trace::ShadowComparison& worst = *verdict.worst;
    const std::string type(trace.String(worst.module_type));
    Finding finding = NewFinding();
    finding.message = absl::StrFormat(
        "The graphed forward of %s (make_graphed_callables) differs from its own eager forward on %d of %d compared "
        "calls; the worst is call %d.",
        type, verdict.differing, verdict.calls, worst.call);
    finding.evidence = {
        "graphcheck run --shadow: right after each graphed call, the module's eager forward ran twice on the same "
        "input, parameters and buffers (calls whose eager forward draws random numbers are not compared)"};
    for (std::string& line : verdict.table) finding.evidence.push_back(std::move(line));
    finding.where.key = type;
    finding.where.python = trace::PythonFrames(trace, worst.stack);
    finding.fix = kFix;
    findings->push_back(std::move(finding));
  }
}

}  // namespace graphcheck
