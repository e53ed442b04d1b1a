// host-value-frozen: a Python number or flag that a captured graph baked in changed while the graph is still replayed.
// A capture records kernel arguments, not the Python that computed them: the learning rate of an optimizer that steps
// inside the capture (a float `lr`: an LR scheduler's new value never reaches the replays; a tensor `lr` is read at
// each replay), a number a graphed module's forward reads as `self.NAME`, any number the program's own code read
// inside the capture from a global, a closure, an object's attribute or a dict or list entry (host_reads.py observes
// the capture's Python), and a parameter's requires_grad (the graph computes gradients for what required them at
// capture). The Python probe records these at capture end and compares them at the scheduler's step(), at the line
// that set them and at the graph's replays (watches.py, contract.py); a change made by a call that no replay follows
// is left alone. Under --shadow the module's comparisons decide instead for a graphed module's numbers
// (numerics-forward names the attribute), since a number forward reads need not change its outputs.
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "analysis/python_probe.h"
#include "analysis/trace_analysis.h"
#include "checks/checks.h"
#include "checks/trace/probe_findings.h"
#include "core/check_ids.h"
#include "core/plural.h"

namespace graphcheck::checks {

using analysis::ProbeEventLocation;
using analysis::TraceAnalysis;

namespace {

using trace::HostValueChange;
using trace::HostValueRole;

class HostValueFrozenCheck : public CheckOf<TraceAnalysis> {
 public:
  HostValueFrozenCheck()
      : CheckOf(CheckInfo{check_id::kHostValueFrozen,
                          "A number or flag the graph baked in at capture changed afterwards",
                          Severity::kError,
                          CheckArea::kState,
                          "A Python number or flag a captured graph read at capture (a float learning rate of an "
                          "optimizer stepping inside the capture, a number the captured code read from a module, a "
                          "global, a closure, an object or a dict, a parameter's requires_grad) changed while the "
                          "graph is still replayed: every replay keeps the value it had at capture, so training "
                          "silently goes on with the old one.",
                          {}}) {}

 protected:
  void Read(const TraceAnalysis& analysis, const BoundOptions&, std::vector<Finding>* findings) const override {
    const trace::Trace& trace = analysis.trace();
    std::set<uint64_t> shadowed;  // modules --shadow compared: numerics-forward judges their numbers
    for (const trace::ShadowComparison& c : trace.shadow_comparisons) {
      if (c.subject == trace::ShadowSubject::kModuleForward) shadowed.insert(c.module);
    }
    // One finding per graph and role: a scheduler changes one learning rate per parameter group at once.
    // By graph, then role name.
    std::map<std::pair<uint64_t, absl::string_view>, std::vector<const HostValueChange*>> changed;
    for (const HostValueChange& change : analysis.probe().records().host_value_changes) {
      if (change.role == HostValueRole::kGrad) continue;  // grad-detached
      if (change.role == HostValueRole::kModuleAttribute && shadowed.count(change.graph) != 0) continue;
      // A graphed callable's change is sent from its call, whose replay follows; its id is the module's, no
      // capture's.
      if (change.at_change && change.at.origin != trace::ProbeOrigin::kGraphedCallables &&
          !ReplayedAfter(analysis, change.graph, change.at.time_ns)) {
        continue;
      }
      changed[{change.graph, trace::HostValueRoleName(change.role)}].push_back(&change);
    }
    for (const auto& [key, changes] : changed) {
      findings->push_back(Describe(trace, changes.front()->role, changes));
    }
  }

 private:
  // Numbers host_reads.py saw the captured code read, with a line saying where it was read.
  static bool IsHostRead(HostValueRole role) {
    return role == HostValueRole::kGlobal || role == HostValueRole::kClosure || role == HostValueRole::kAttribute ||
           role == HostValueRole::kEntry;
  }

  // An optimizer that stepped inside the capture: a hyperparameter changed, or a param group added.
  static void DescribeOptimizerChange(const trace::Trace& trace, const HostValueChange& first, Finding* out) {
    Finding& finding = *out;
    const std::string name(first.name);
    const double captured = first.captured, now = first.now;
    if (first.role == HostValueRole::kOptimizerParamGroups) {
      finding.message = absl::StrFormat(
          "%s %g param groups (%s), but the graph%s was captured stepping %g of them: every replay updates only the "
          "parameters of the first %g, and the parameters added since never change.",
          first.at_change ? "This call gave the optimizer" : "At this replay the optimizer has", now, name,
          trace::CapturedAt(trace, first.graph), captured, captured);
      finding.fix =
          "Capture the step again after add_param_group (a warm-up on a side stream, then a new capture), or add "
          "every group before the capture and keep the ones that should not train yet at lr 0 in a tensor.";
    } else {
      const std::string change = first.at_change
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
    }
  }

  Finding Describe(const trace::Trace& trace, HostValueRole role,
                   const std::vector<const HostValueChange*>& events) const {
    const HostValueChange& first = *events.front();
    const std::string name(first.name);
    const double captured = first.captured, now = first.now;
    const std::string read_at = first.read_at.empty() ? "" : absl::StrCat(" (in ", first.read_at, ")");
    Finding finding = NewFinding();
    finding.where = ProbeEventLocation(trace, first.at);
    finding.where.key = name;
    if (role == HostValueRole::kRequiresGrad) {
      const bool trains_now = now != 0;
      finding.message = absl::StrFormat(
          "%s %s %s: the graph%s was captured when %s, so its replays %s.",
          first.at_change ? "This call makes" : "At this replay,", name,
          events.size() > 1
              ? absl::StrFormat("and %s %s", Plural(events.size() - 1, "more parameter", "more parameters"),
                                trains_now ? "require gradients" : "no longer require gradients")
              : (trains_now ? "require gradients" : "no longer require gradients"),
          trace::CapturedAt(trace, first.graph), trains_now ? "they did not" : "they did",
          trains_now ? "compute no gradient for them: .grad stays as it is and the optimizer never moves them"
                     : "still compute and write their gradients, and an optimizer stepping inside the graph still "
                       "updates them");
      finding.fix =
          "Capture the graph again after changing which parameters require gradients (a new CUDAGraph after a "
          "warm-up on a side stream, or make_graphed_callables again), or capture with every parameter that will "
          "train requiring gradients and keep the frozen ones out of the optimizer.";
    } else if (role == HostValueRole::kGradMode && first.read_at.empty()) {
      // The probe's no_grad_replays.py: no read of the grad mode, an optimizer step after a replay in grad mode.
      finding.message = absl::StrFormat(
          "This replay runs with grad mode on, and the next optimizer step holds %s with no gradient: the graph%s "
          "computes without autograd (captured under torch.no_grad()), so a backward through its outputs trains "
          "nothing it read, where the same code run eagerly in grad mode would.",
          name, trace::CapturedAt(trace, first.graph));
      finding.fix =
          "For the steps that train what the graph reads, capture forward and backward in grad mode "
          "(torch.cuda.make_graphed_callables, or torch.cuda.graph around forward and backward) and replay that "
          "graph; keep the no_grad graph for inference.";
    } else if (role == HostValueRole::kGradMode) {
      finding.message = absl::StrFormat(
          "%s with grad mode %s, but the captured code read torch.is_grad_enabled()%s when the graph%s was captured "
          "with it %s: every replay runs the branch taken then.",
          first.at_change ? "This call runs the graph's next replays" : "This replay runs", now != 0 ? "on" : "off",
          read_at, trace::CapturedAt(trace, first.graph), captured != 0 ? "on" : "off");
      finding.fix =
          "Capture one graph per grad mode and replay the one that matches (an inference graph under torch.no_grad()), "
          "or make the branch a tensor operation the graph computes in both modes.";
    } else if (role == HostValueRole::kAutocast) {
      finding.message = absl::StrFormat(
          "This replay runs with CUDA autocast %s, where earlier replays ran with it %s as at the capture of the "
          "graph%s: the graph computes in the precision it was captured in, whatever autocast says now.",
          trace::AutocastStateName(now), trace::AutocastStateName(captured), trace::CapturedAt(trace, first.graph));
      finding.fix =
          "Capture one graph per precision and replay the one that matches the autocast region it runs in, or "
          "capture again after changing autocast.";
    } else if (IsHostRead(role)) {
      const std::string what = role == HostValueRole::kGlobal    ? absl::StrCat("the global ", name)
                               : role == HostValueRole::kClosure ? absl::StrCat("the closure variable ", name)
                                                                 : name;
      finding.message = absl::StrFormat(
          "%s, which the captured code read%s when the graph%s was captured: every replay still computes with %g.",
          first.at_change ? absl::StrFormat("This line changes %s from %g to %g", what, captured, now)
                          : absl::StrFormat("At this replay %s is %g, not %g", what, now, captured),
          read_at, trace::CapturedAt(trace, first.graph), captured);
      finding.fix =
          "Keep a number the captured code reads and the program changes in a CUDA tensor, updated in place "
          "between replays (scale = torch.tensor(1.0, device=\"cuda\") once, scale.fill_(value) after), which every "
          "replay reads; or capture the graph again after changing it.";
    } else if (role == HostValueRole::kOptimizerParamGroups || role == HostValueRole::kOptimizerHyperparameter) {
      DescribeOptimizerChange(trace, first, &finding);
    } else if (first.at.origin == trace::ProbeOrigin::kGraphedCallables ||
               first.at.origin == trace::ProbeOrigin::kUnknown) {
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
          first.at_change ? absl::StrFormat("This line changes %s from %g to %g", name, captured, now)
                          : absl::StrFormat("%s is %g at this replay", name, now),
          trace::CapturedAt(trace, first.graph), captured);
      finding.fix =
          "Keep a value the forward reads and the program changes in a tensor updated in place (a buffer: "
          "self.temperature.fill_(value)), which every replay reads; or capture the graph again after changing it.";
    }
    for (size_t i = 0; i < events.size() && i < 5; ++i) {
      finding.evidence.push_back(
          absl::StrFormat("%s: %g at capture, %g now", events[i]->name, events[i]->captured, events[i]->now));
    }
    if (events.size() > 5) finding.evidence.push_back(absl::StrCat("and ", events.size() - 5, " more"));
    return finding;
  }
};

}  // namespace

std::unique_ptr<Check> NewHostValueFrozenCheck() { return std::make_unique<HostValueFrozenCheck>(); }

}  // namespace graphcheck::checks
