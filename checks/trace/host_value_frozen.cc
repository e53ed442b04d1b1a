// host-value-frozen: a Python number that a captured graph baked in changed while the graph is still replayed. A
// capture records kernel arguments, not the Python that computed them: the learning rate of an optimizer that steps
// inside the capture (a float `lr`: an LR scheduler's new value never reaches the replays; a tensor `lr` is read at
// each replay), and a number a graphed module's forward reads as `self.NAME`. The Python probe records these at
// capture end and compares them at the scheduler's step() and at the graph's replays (watches.py); a change made by a
// call that no replay follows is left alone. Under --shadow the module's comparisons decide instead (numerics-forward
// names the attribute), since a number forward reads need not change its outputs.
#include <map>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "analysis/python_probe.h"
#include "analysis/trace_analysis.h"
#include "checks/checks.h"
#include "checks/trace/probe_findings.h"

namespace graphcheck::checks {

using analysis::ProbeEventLocation;
using analysis::TraceAnalysis;

namespace {

using trace::ProbeEvent;
using trace::ProbeEventKind;

class HostValueFrozenCheck : public CheckOf<TraceAnalysis> {
 public:
  HostValueFrozenCheck()
      : CheckOf(CheckInfo{"host-value-frozen",
                          "A number the graph baked in at capture changed afterwards",
                          Severity::kError,
                          CheckArea::kState,
                          "A Python number a captured graph read at capture (a float learning rate of an optimizer "
                          "stepping inside the "
                          "capture, a number a graphed module's forward reads) changed while the graph is still "
                          "replayed: every replay "
                          "keeps the value it had at capture, so training silently goes on with the old one.",
                          {}}) {}

 protected:
  void Read(const TraceAnalysis& analysis, const BoundOptions&, std::vector<Finding>* findings) const override {
    const trace::Trace& trace = analysis.trace();
    std::set<uint64_t> shadowed;  // modules --shadow compared: numerics-forward judges their numbers
    for (const trace::ShadowComparison& c : trace.shadow_comparisons) {
      if (c.subject == trace::ShadowSubject::kModuleForward) shadowed.insert(c.module);
    }
    // One finding per graph and role: a scheduler changes one learning rate per parameter group at once.
    std::map<std::pair<uint64_t, std::string>, std::vector<const ProbeEvent*>> changed;
    for (const ProbeEvent& event : trace.probe_events) {
      if (event.kind != ProbeEventKind::kHostValueChanged) continue;
      const std::string role(trace.String(event.type));
      if (role == "module-attribute" && shadowed.count(event.graph) != 0) continue;
      if (role != "optimizer-hyperparameter" && role != "module-attribute") continue;
      if (event.pool == 1 && !ReplayedAfter(analysis, event.graph, event.time_ns)) continue;
      changed[{event.graph, role}].push_back(&event);
    }
    for (const auto& [key, events] : changed) {
      findings->push_back(Describe(trace, key.second, events));
    }
  }

 private:
  Finding Describe(const trace::Trace& trace, const std::string& role,
                   const std::vector<const ProbeEvent*>& events) const {
    const ProbeEvent& first = *events.front();
    const std::string name(trace.String(first.text));
    const double captured = trace::HostValueNumber(first.value), now = trace::HostValueNumber(first.value_now);
    Finding finding = NewFinding();
    finding.where = ProbeEventLocation(trace, first);
    finding.where.key = name;
    if (role == "optimizer-hyperparameter") {
      const std::string change = first.pool == 1
                                     ? absl::StrFormat("This call changed %s from %g to %g", name, captured, now)
                                     : absl::StrFormat("%s is %g at this replay", name, now);
      finding.message = absl::StrFormat(
          "%s, but the graph%s baked in %g when the optimizer stepped inside the capture: every replay still steps "
          "with %g.",
          change, trace::CapturedAt(trace, first.graph), captured, captured);
      finding.fix =
          "Give the optimizer its hyperparameter as a tensor on the GPU (torch.optim.Adam(params, "
          "lr=torch.tensor(0.01, device=\"cuda\"), capturable=True)): LR schedulers then update it in place and every "
          "replay reads the current value. Or step the optimizer outside the graph.";
    } else if (first.origin == trace::ProbeOrigin::kGraphedCallables || first.origin == trace::ProbeOrigin::kUnknown) {
      finding.message = absl::StrFormat(
          "The forward of a module graphed by make_graphed_callables reads %s, which changed from %g to %g after "
          "capture: the graphs replay the %g they were captured with.",
          name, captured, now, captured);
      finding.fix =
          "Keep a value the forward reads and the program changes in a tensor updated in place (a buffer: "
          "self.scale.fill_(value)), or call make_graphed_callables again after changing it.";
    } else {
      finding.message = absl::StrFormat(
          "%s, which the forward of a module that ran inside the capture of the graph%s reads: the graph replays the "
          "%g it was captured with.",
          first.pool == 1 ? absl::StrFormat("This line changes %s from %g to %g", name, captured, now)
                          : absl::StrFormat("%s is %g at this replay", name, now),
          trace::CapturedAt(trace, first.graph), captured);
      finding.fix =
          "Keep a value the forward reads and the program changes in a tensor updated in place (a buffer: "
          "self.temperature.fill_(value)), which every replay reads; or capture the graph again after changing it.";
    }
    for (size_t i = 0; i < events.size() && i < 5; ++i) {
      finding.evidence.push_back(absl::StrFormat("%s: %g at capture, %g now", trace.String(events[i]->text),
                                                 trace::HostValueNumber(events[i]->value),
                                                 trace::HostValueNumber(events[i]->value_now)));
    }
    if (events.size() > 5) finding.evidence.push_back(absl::StrCat("and ", events.size() - 5, " more"));
    return finding;
  }
};

}  // namespace

std::unique_ptr<Check> NewHostValueFrozenCheck() { return std::make_unique<HostValueFrozenCheck>(); }

}  // namespace graphcheck::checks
