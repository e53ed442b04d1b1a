// address-drift: a tensor a captured graph reads has moved since capture. A graph reads the memory its tensors had
// then: a parameter assigned a new nn.Parameter (a checkpoint reloaded by rebinding, load_state_dict(assign=True), a
// layer replaced), a parameter given a new .data (EMA weights swapped in with p.data = ema), or a buffer rebound is no
// longer what the graph reads, so it computes with stale values and, for parameters, the gradients go to the old
// tensor while the optimizer steps the new one. The Python probe compares, by name, what the modules whose forward ran
// inside the capture hold on the graph's first replays (and then exponentially spaced ones) with what they held at
// capture. For a module graphed by make_graphed_callables a new .data on the same parameter is not drift: it copies
// it in on every call. Memory that was also freed is graph-reads-freed's.
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "analysis/python_probe.h"
#include "analysis/trace_analysis.h"
#include "checks/checks.h"
#include "core/check_ids.h"

namespace graphcheck::checks {

using analysis::ProbeEventLocation;
using analysis::TraceAnalysis;

namespace {

using trace::StateRebound;
using trace::TensorRole;

class AddressDriftCheck : public CheckOf<TraceAnalysis> {
 public:
  AddressDriftCheck()
      : CheckOf(CheckInfo{
            check_id::kAddressDrift,
            "A parameter or buffer a graph reads moved after capture",
            Severity::kError,
            CheckArea::kState,
            "A module whose forward a graph captured holds a new tensor (or new memory) under a parameter's or "
            "buffer's name: the graph still reads what it was captured with, so training goes on with stale weights "
            "or state.",
            {}}) {}

 protected:
  void Read(const TraceAnalysis& analysis, const BoundOptions&, std::vector<Finding>* findings) const override {
    const trace::Trace& trace = analysis.trace();
    // One finding per graphed module and role: a checkpoint reloaded by rebinding moves every parameter at once.
    // By graph, then role name.
    std::map<std::pair<uint64_t, absl::string_view>, std::vector<const StateRebound*>> moved;
    for (const StateRebound& rebound : analysis.probe().records().state_rebound) {
      if (rebound.freed || rebound.role == TensorRole::kStaticInput)
        continue;  // graph-reads-freed, static-input-rebound
      moved[{rebound.graph, trace::TensorRoleName(rebound.role)}].push_back(&rebound);
    }
    for (const auto& [key, events] : moved) {
      const StateRebound& first = *events.front();
      const TensorRole role_kind = first.role;
      const std::string role(key.second);
      std::vector<std::string> names;
      for (const StateRebound* e : events) names.emplace_back(e->name);
      Finding finding = NewFinding();
      const bool parameter = role_kind == TensorRole::kParameter;
      const bool optimizer_state = role_kind == TensorRole::kOptimizerState;
      const std::string noun = optimizer_state ? "optimizer state tensor" : role;
      // Before format 1.10 only make_graphed_callables' modules were watched, and their events named no origin.
      const bool graphed =
          first.at.origin == trace::ProbeOrigin::kGraphedCallables || first.at.origin == trace::ProbeOrigin::kUnknown;
      const std::string owner = graphed ? "of a module graphed by make_graphed_callables" : "that the graph reads";
      finding.message = absl::StrCat(
          events.size() == 1
              ? absl::StrCat("The ", noun, " ", names[0], " ", owner, " is a new tensor")
              : absl::StrCat(events.size(), " ", noun, "s ", owner, " (",
                             absl::StrJoin(names.begin(), names.begin() + std::min<size_t>(3, names.size()), ", "),
                             names.size() > 3 ? ", ..." : "", ") are new tensors"),
          graphed ? "" : " or live in new memory", trace::CapturedAt(trace, first.graph), ": ",
          graphed ? "its graphs" : "the graph", " still read the ", events.size() == 1 ? "tensor" : "tensors",
          graphed ? " they were" : " it was", " captured with, so ",
          parameter         ? "the forward computes with the old weights and their gradients go to the old "
                              "tensors, while the optimizer steps the new ones"
          : optimizer_state ? "every replay steps with and updates the old state, and the optimizer's "
                              "state the program keeps (and saves) no longer changes"
                            : "the graphs read and update the old memory, and the module's buffer no "
                              "longer changes",
          ".");
      for (size_t i = 0; i < events.size() && i < 5; ++i) {
        finding.evidence.push_back(absl::StrFormat("%s %s: 0x%x at capture, 0x%x now", role, names[i],
                                                   events[i]->address_at_capture, events[i]->address_now));
      }
      if (events.size() > 5) finding.evidence.push_back(absl::StrCat("and ", events.size() - 5, " more"));
      finding.where = ProbeEventLocation(trace, first.at);
      finding.where.key = names[0];
      const std::string again = graphed ? "call make_graphed_callables again" : "capture the graph again";
      finding.fix = optimizer_state ? absl::StrCat(
                                          "Restore optimizer state in place (for each state tensor, "
                                          "state[key].copy_(saved[key])) instead of optimizer.load_state_dict(), which "
                                          "makes new tensors; or ",
                                          again, " after loading.")
                    : parameter ? absl::StrCat(
                                      "Copy new values into the parameters the graph was captured with "
                                      "(model.load_state_dict(state), which copies in place, or p.data.copy_(new) "
                                      "instead of p.data = new; for EMA weights, swap them with p.data.copy_ and a "
                                      "backup copy) instead of assigning new tensors; or ",
                                      again, " after loading.")
                                : absl::StrCat(
                                      "Update buffers in place (buf.copy_(new), buf.add_(1)) instead of assigning new "
                                      "tensors; or ",
                                      again, " after the change.");
      findings->push_back(std::move(finding));
    }
  }
};

}  // namespace

std::unique_ptr<Check> NewAddressDriftCheck() { return std::make_unique<AddressDriftCheck>(); }

}  // namespace graphcheck::checks
