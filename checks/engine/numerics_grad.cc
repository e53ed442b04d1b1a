// numerics-grad: the graphed backward computes other parameter gradients than eager, or the .grad it leaves is not
// what it accumulated. Two producers:
// - `graphcheck check`'s engine: the first graphed step's parameter gradients against eager's, while its forward
//   outputs agree (where they differ, numerics-forward names the cause and this check stays silent);
// - in a running program, the Python probe under `graphcheck run --shadow N`, on the first N calls of each module
//   graphed by make_graphed_callables (shadow_grads.py): the gradients the backward graph returns against the
//   gradients of the module's eager forward for the same output gradients (trace::ShadowSubject::kModuleBackward),
//   and each .grad right after accumulation against .grad before plus the gradient received (kGradAccumulation).
//   The first differs where the backward reads something frozen at capture (a host value in a custom autograd
//   function or a backward hook); the second where something wrote into .grad's memory during the backward. Where
//   the probe saw why (.grad in a graph's pool: grad-aliases-graph), that check names it and this one stays silent.
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "analysis/trace_analysis.h"
#include "checks/checks.h"
#include "checks/engine/numerics_rule.h"
#include "checks/engine/shadow_verdict.h"
#include "core/check.h"
#include "core/check_ids.h"
#include "core/plural.h"
#include "engine/run/engine_run.h"
#include "trace/events.h"
#include "trace/python_frames.h"

namespace graphcheck::checks {
namespace {

class NumericsGradCheck : public CheckOf<EngineRun, analysis::TraceAnalysis> {
 public:
  NumericsGradCheck();
  // An engine run, or a trace holding --shadow's comparisons.
  bool CanRun(const CheckInputs& inputs) const override;

 protected:
  void Read(const EngineRun* run, const analysis::TraceAnalysis* analysis, const BoundOptions& options,
            std::vector<Finding>* findings) const override;

 private:
  void CheckEngineRun(const EngineRun& run, const BoundOptions& options, std::vector<Finding>* findings) const;
  void CheckShadowBackwards(const analysis::TraceAnalysis& analysis, const BoundOptions& options,
                            std::vector<Finding>* findings) const;
  Finding Describe(const trace::Trace& trace, const ShadowVerdict& verdict) const;
};

constexpr char kBackwardFix[] =
    "Look at what runs in backward only: backward hooks, custom autograd functions that read host values or module "
    "attributes, gradient scaling computed on the host. Inside a graph they run once, at capture: make them read a "
    "CUDA tensor updated in place.";
constexpr char kAccumulationFix[] =
    "Give every parameter a .grad of its own before graphing (p.grad = torch.zeros_like(p) before "
    "torch.cuda.make_graphed_callables, then zero_grad(set_to_none=False)), or zero with set_to_none=True; never "
    "make a .grad a view of a graph's output or of memory a graph writes.";

// The modules whose forwards already differ (numerics-forward names the cause of their gradients too).
std::set<uint64_t> ForwardsThatDiffer(const trace::Trace& trace, const BoundOptions& options) {
  std::set<uint64_t> modules;
  for (const ShadowVerdict& forward :
       JudgeShadowComparisons(trace, trace::ShadowSubject::kModuleForward, /*host_draws=*/false, options)) {
    if (forward.differing > 0) modules.insert(forward.owner);
  }
  return modules;
}

// The modules whose .grad the probe saw in a graph's pool before a backward (grad-aliases-graph names that cause).
std::set<uint64_t> GradsInAPool(const trace::ProbeRecords& records) {
  std::set<uint64_t> modules;
  for (const trace::GradAliased& e : records.grads_aliased) modules.insert(e.module);
  return modules;
}

}  // namespace

NumericsGradCheck::NumericsGradCheck()
    : CheckOf(CheckInfo{
          check_id::kNumericsGrad, "The graphed backward computes different gradients than eager", Severity::kError,
          CheckArea::kNumerics,
          "The parameter gradients that the backward graph produces differ from eager's (bitwise where eager "
          "reproduces itself, else beyond eager's own spread), on `graphcheck check`'s first step while the forward "
          "outputs agree, or on the first calls of a graphed module under `graphcheck run --shadow N`; or, under "
          "--shadow, a .grad after the backward is not .grad before plus the gradient it accumulated.",
          NumericsRuleOptions()}) {}

bool NumericsGradCheck::CanRun(const CheckInputs& inputs) const {
  const trace::Trace* trace = inputs.Find<trace::Trace>();
  return inputs.Find<EngineRun>() != nullptr || (trace != nullptr && !trace->shadow_comparisons.empty());
}

void NumericsGradCheck::Read(const EngineRun* run, const analysis::TraceAnalysis* analysis, const BoundOptions& options,
                             std::vector<Finding>* findings) const {
  if (run != nullptr) CheckEngineRun(*run, options, findings);
  if (analysis != nullptr) CheckShadowBackwards(*analysis, options, findings);
}

void NumericsGradCheck::CheckEngineRun(const EngineRun& run, const BoundOptions& options,
                                       std::vector<Finding>* findings) const {
  const NumericsRule rule(run, options);
  if (!FindMismatches(run, rule, {TensorRole::kOutput}).empty()) return;  // numerics-forward's finding
  const std::vector<SampleMismatch> mismatches = FindMismatches(run, rule, {TensorRole::kGradient});
  if (mismatches.empty()) return;
  Finding finding = NewFinding();
  DescribeMismatches(run, rule, mismatches, TensorRole::kGradient, "parameter gradient of the first step",
                     "parameter gradients of the first step", &finding);
  finding.fix = kBackwardFix;
  findings->push_back(std::move(finding));
}

void NumericsGradCheck::CheckShadowBackwards(const analysis::TraceAnalysis& analysis, const BoundOptions& options,
                                             std::vector<Finding>* findings) const {
  const trace::Trace& trace = analysis.trace();
  const std::set<uint64_t> forwards_differ = ForwardsThatDiffer(trace, options);
  const std::set<uint64_t> grads_in_pool = GradsInAPool(analysis.probe().records());
  for (const trace::ShadowSubject subject :
       {trace::ShadowSubject::kModuleBackward, trace::ShadowSubject::kGradAccumulation}) {
    for (const ShadowVerdict& verdict : JudgeShadowComparisons(trace, subject, /*host_draws=*/false, options)) {
      const bool named_elsewhere =
          forwards_differ.count(verdict.owner) > 0 ||
          (subject == trace::ShadowSubject::kGradAccumulation && grads_in_pool.count(verdict.owner) > 0);
      if (verdict.differing > 0 && !named_elsewhere) findings->push_back(Describe(trace, verdict));
    }
  }
}

Finding NumericsGradCheck::Describe(const trace::Trace& trace, const ShadowVerdict& verdict) const {
  const trace::ShadowComparison& worst = *verdict.worst;
  const std::string type(trace.String(worst.module_type));
  const bool accumulation = verdict.subject == trace::ShadowSubject::kGradAccumulation;
  Finding finding = NewFinding();
  if (accumulation) {
    finding.message = absl::StrFormat(
        "After the graphed backward of %s (make_graphed_callables), .grad is not what the backward accumulated on "
        "%d of %s: on call %d, .grad differs from .grad before plus the gradient added for %d of %s. Something "
        "wrote into .grad's memory during the backward, as a graph whose gradient buffers are the .grad does "
        "(PyTorch #181723): the optimizer steps on the wrong gradients.",
        type, verdict.differing, Plural(verdict.compared, "compared call", "compared calls"), worst.call,
        verdict.worst_differing, Plural(verdict.worst_tensors, "parameter", "parameters"));
    finding.evidence = {
        "graphcheck run --shadow: before the graphed backward each .grad was copied; right after PyTorch's "
        "AccumulateGrad added the gradient it received, .grad was compared with the copy plus that gradient"};
    finding.fix = kAccumulationFix;
  } else {
    finding.message = absl::StrFormat(
        "The graphed backward of %s (make_graphed_callables) computes other parameter gradients than its own eager "
        "backward on %d of %s; the worst is call %d (%s).",
        type, verdict.differing, Plural(verdict.compared, "compared call", "compared calls"), worst.call,
        verdict.worst_name);
    finding.evidence = {
        "graphcheck run --shadow: the module's eager forward ran twice on the graphed call's input, with every "
        "random source put back; in the backward, its outputs were differentiated with the graphed outputs' "
        "gradients and compared with what the backward graph returned"};
    finding.fix = kBackwardFix;
  }
  for (const std::string& line : verdict.table) finding.evidence.push_back(line);
  finding.where.key = type;
  finding.where.python = trace::PythonFrames(trace, worst.stack);
  return finding;
}

std::unique_ptr<Check> NewNumericsGradCheck() { return std::make_unique<NumericsGradCheck>(); }

}  // namespace graphcheck::checks
