// numerics-grad: the first graphed step's parameter gradients differ from eager's while its forward outputs agree:
// the backward graph computes something else (a backward hook or a custom autograd function frozen at capture,
// gradients accumulated into a tensor the graph no longer writes). Where the outputs already differ, numerics-forward
// names the cause and this check stays silent.
#include <memory>

#include "core/check.h"
#include "engine/run/engine_run.h"
#include "validators/checks.h"
#include "validators/numerics/numerics_rule.h"

namespace graphcheck {
namespace {

class NumericsGradCheck : public CheckOf<EngineRun> {
 public:
  NumericsGradCheck();

 protected:
  void Read(const EngineRun& run, const BoundOptions& options, std::vector<Finding>* findings) const override;
};

}  // namespace

NumericsGradCheck::NumericsGradCheck()
    : CheckOf(CheckInfo{
          "numerics-grad", "The graphed backward computes different gradients than eager", Severity::kError,
          CheckArea::kNumerics,
          "On the first step the forward outputs agree, but the parameter gradients that the backward graph produces "
          "differ from eager's (bitwise where eager reproduces itself, else beyond eager's own spread).",
          NumericsRuleOptions()}) {}

void NumericsGradCheck::Read(const EngineRun& run, const BoundOptions& options, std::vector<Finding>* findings) const {
  const NumericsRule rule(run, options);
  if (!FindMismatches(run, rule, {TensorRole::kOutput}).empty()) return;  // numerics-forward's finding
  const std::vector<SampleMismatch> mismatches = FindMismatches(run, rule, {TensorRole::kGradient});
  if (mismatches.empty()) return;
  Finding finding = NewFinding();
  DescribeMismatches(run, rule, mismatches, TensorRole::kGradient, "parameter gradients of the first step", &finding);
  finding.fix =
      "Look at what runs in backward only: backward hooks, custom autograd functions that read host values or "
      "module attributes, gradient scaling computed on the host. Inside a graph they run once, at capture.";
  findings->push_back(std::move(finding));
}

std::unique_ptr<Check> NewNumericsGradCheck() { return std::make_unique<NumericsGradCheck>(); }

}  // namespace graphcheck
