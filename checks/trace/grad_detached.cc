// grad-detached: a gradient a captured graph writes is no longer the parameter's .grad. A capture of forward and
// backward with the optimizer stepping eagerly after each replay keeps writing the gradients into the tensors it
// captured; `optimizer.zero_grad()` (set_to_none=True, PyTorch's default) between replays sets .grad to None, so the
// eager optimizer finds no gradient and skips every parameter: training stops after the first step, with no error.
// The Python probe records, at capture end, the .grad tensors the capture wrote for parameters whose optimizer did not
// step inside it, and looks at them after every zero_grad() and at replays (watches.py); a change that no replay
// follows is left alone (zero_grad at the end of training).
#include <map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analysis/python_probe.h"
#include "analysis/trace_analysis.h"
#include "checks/checks.h"
#include "checks/trace/probe_findings.h"
#include "core/check_ids.h"

namespace graphcheck::checks {

using analysis::ProbeEventLocation;
using analysis::TraceAnalysis;

namespace {

using trace::HostValueChange;
using trace::HostValueRole;

class GradDetachedCheck : public CheckOf<TraceAnalysis> {
 public:
  GradDetachedCheck()
      : CheckOf(CheckInfo{
            check_id::kGradDetached,
            "A gradient the graph writes is no longer the parameter's .grad",
            Severity::kError,
            CheckArea::kState,
            "A captured backward writes its gradients into the tensors it captured, but the program set .grad to None "
            "(zero_grad()) or to another tensor between replays: the optimizer stepping outside the graph no longer "
            "sees "
            "the graph's gradients, and the parameters stop training.",
            {}}) {}

 protected:
  void Read(const TraceAnalysis& analysis, const BoundOptions&, std::vector<Finding>* findings) const override {
    const trace::Trace& trace = analysis.trace();
    std::map<uint64_t, std::vector<const HostValueChange*>> detached;  // graph -> its changes, in time order
    for (const HostValueChange& change : analysis.probe().records().host_value_changes) {
      if (change.role != HostValueRole::kGrad) continue;
      if (change.at_change && !ReplayedAfter(analysis, change.graph, change.at.time_ns)) continue;
      detached[change.graph].push_back(&change);
    }
    for (const auto& [graph, events] : detached) {
      const HostValueChange& first = *events.front();
      const std::string name(first.name);
      const bool none = first.grad_now == 0;
      const std::string more = events.size() > 1 ? absl::StrCat(" (and ", events.size() - 1, " more)") : "";
      Finding finding = NewFinding();
      finding.where = ProbeEventLocation(trace, first.at);
      finding.where.key = name;
      finding.message = absl::StrCat(
          first.at_change ? "After this call the" : "At this replay the", " .grad of ", name, more,
          none ? " is None" : " is another tensor", ", but the graph", trace::CapturedAt(trace, graph),
          " still writes its gradients into the tensors it captured: ",
          none ? "an optimizer stepping outside the graph sees no gradient and skips the parameters, so training "
                 "stops after the first step."
               : "an optimizer stepping outside the graph steps with gradients the graph no longer writes.");
      for (size_t i = 0; i < events.size() && i < 5; ++i) {
        finding.evidence.push_back(absl::StrFormat(
            "%s: .grad at 0x%x at capture, %s", events[i]->name, events[i]->grad_at_capture,
            events[i]->grad_now == 0 ? std::string("None now") : absl::StrFormat("0x%x now", events[i]->grad_now)));
      }
      if (events.size() > 5) finding.evidence.push_back(absl::StrCat("and ", events.size() - 5, " more"));
      finding.fix =
          "Zero the gradients in place between replays (optimizer.zero_grad(set_to_none=False) or "
          "model.zero_grad(set_to_none=False)), or capture the optimizer step inside the graph too. (This is for a "
          "graph that computes the gradients itself; for modules graphed by make_graphed_callables, give the "
          "parameters gradients of their own before graphing instead: see grad-aliases-graph.)";
      findings->push_back(std::move(finding));
    }
  }
};

}  // namespace

std::unique_ptr<Check> NewGradDetachedCheck() { return std::make_unique<GradDetachedCheck>(); }

}  // namespace graphcheck::checks
