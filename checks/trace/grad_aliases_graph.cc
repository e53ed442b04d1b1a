// grad-aliases-graph: parameters' .grad tensors live in the memory pool of the graphs make_graphed_callables made for
// their module, right before a graphed backward replays (PyTorch #181723, "module: correctness (silent)"). When the
// first backward finds .grad None, PyTorch's AccumulateGrad takes the graph's static gradient output as the .grad
// itself (a detached view of it); every later backward replay writes the new gradient into that memory, and
// AccumulateGrad then adds it to the .grad that is the same memory: the gradient doubles, and accumulation over
// micro-batches keeps only the last one, twice. The Python probe checks, in an autograd pre-hook of the graphed
// backward on the module's first calls, whether any .grad lies in a graph pool. In the program's own captures the
// program does it itself: it makes a graph's gradient output the .grad (`p.grad = static_grads[i]` after a captured
// torch.autograd.grad), and the probe sees, at a replay, a .grad the capture did not make inside a graph's pool.
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analysis/python_probe.h"
#include "analysis/trace_analysis.h"
#include "checks/checks.h"
#include "core/check_ids.h"

namespace graphcheck::checks {

using analysis::ProbeEventLocation;
using analysis::TraceAnalysis;

namespace {

class GradAliasesGraphCheck : public CheckOf<TraceAnalysis> {
 public:
  GradAliasesGraphCheck()
      : CheckOf(CheckInfo{check_id::kGradAliasesGraph,
                          "A .grad lives in a graph's memory, which the next replay overwrites",
                          Severity::kError,
                          CheckArea::kState,
                          "A parameter's .grad is the static gradient output of a graph: of those "
                          "make_graphed_callables made (PyTorch #181723), or of the program's own capture that it "
                          "made the .grad. Each replay overwrites it and accumulation adds the new gradient to itself, "
                          "so gradients double or lose what was accumulated.",
                          {}}) {}

 protected:
  void Read(const TraceAnalysis& analysis, const BoundOptions&, std::vector<Finding>* findings) const override {
    const trace::Trace& trace = analysis.trace();
    for (const trace::GradAliased& aliased : analysis.probe().records().grads_aliased) {
      const std::string names(aliased.names);
      const std::string grads =
          absl::StrCat("the .grad of ", aliased.count == 1 ? "" : absl::StrCat(aliased.count, " parameters: "), names,
                       aliased.count == 1 ? " is" : " are");
      Finding finding = NewFinding();
      finding.evidence.push_back(
          absl::StrFormat(".grad of %s at 0x%x, inside a graph's private memory pool", names, aliased.first_address));
      if (aliased.at.origin == trace::ProbeOrigin::kGraphedCallables) {
        DescribeGraphedCallables(trace, aliased, grads, &finding);
      } else {
        DescribeOwnCapture(trace, aliased, grads, &finding);
      }
      finding.where = ProbeEventLocation(trace, aliased.at);
      findings->push_back(std::move(finding));
    }
  }

 private:
  // PyTorch #181723: AccumulateGrad took make_graphed_callables' static gradient output as the .grad.
  static void DescribeGraphedCallables(const trace::Trace& trace, const trace::GradAliased& aliased,
                                       const std::string& grads, Finding* finding) {
    finding->message = absl::StrCat(
        "Before this backward, ", grads, " memory of the graphs make_graphed_callables made",
        trace::CapturedAt(trace, aliased.module),
        ": PyTorch's AccumulateGrad took the graph's static gradient output as the .grad when it found none, so "
        "this replay overwrites it and then adds the new gradient to itself: the gradient doubles, and gradients "
        "accumulated over earlier micro-batches are lost.");
    finding->evidence.push_back(
        "PyTorch issue #181723 (open); Transformer Engine fixed it in its own make_graphed_callables (PR #2937)");
    finding->fix =
        "Give the parameters gradients of their own before graphing: for p in model.parameters(): p.grad = "
        "torch.zeros_like(p) before torch.cuda.make_graphed_callables, then zero them in place "
        "(zero_grad(set_to_none=False)). Or zero with set_to_none=True before every backward (no accumulation "
        "over micro-batches), or copy the gradients out (p.grad = p.grad.clone()) right after each backward.";
  }

  // The program made its own graph's gradient output the .grad, outside the capture.
  static void DescribeOwnCapture(const trace::Trace& trace, const trace::GradAliased& aliased, const std::string& grads,
                                 Finding* finding) {
    finding->message = absl::StrCat(
        "After this line ", grads, aliased.count == 1 ? " a static output" : " static outputs", " of the graph",
        trace::CapturedAt(trace, aliased.module),
        ", made the .grad outside the capture: every replay writes its new gradient into that memory, so what was "
        "accumulated there is overwritten, and adding the new gradient to the .grad adds it to itself.");
    finding->fix =
        "Copy the graph's gradient output instead of keeping it: p.grad = g.clone() the first time, or give each "
        "parameter a .grad of its own (p.grad = torch.zeros_like(p)) and p.grad.add_(g) after every replay.";
  }
};

}  // namespace

std::unique_ptr<Check> NewGradAliasesGraphCheck() { return std::make_unique<GradAliasesGraphCheck>(); }

}  // namespace graphcheck::checks
