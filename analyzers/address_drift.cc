// address-drift: a tensor the graphs of make_graphed_callables read has moved since capture. The graphed module keeps
// the parameter objects it was given and its buffers' memory: a parameter assigned a new nn.Parameter (a checkpoint
// reloaded by rebinding, a layer replaced) or a buffer rebound is no longer what the graphs read, so the forward
// computes with stale values and, for parameters, the gradients go to the old tensor while the optimizer steps the new
// one. The Python probe compares, by name, what the module holds on its first calls (and then exponentially spaced
// ones) with what it held at capture. A new .data on the same parameter is not drift: make_graphed_callables copies
// it in on every call.
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "analyzers/checks.h"
#include "analyzers/python_probe.h"
#include "analyzers/trace_analysis.h"

namespace graphcheck::analyzers {
namespace {

using trace::ProbeEvent;
using trace::ProbeEventKind;

class AddressDriftCheck : public CheckOf<TraceAnalysis> {
 public:
  AddressDriftCheck()
      : CheckOf(CheckInfo{
            "address-drift",
            "A parameter or buffer of a graphed module moved after capture",
            Severity::kError,
            CheckArea::kState,
            "A module graphed by make_graphed_callables holds a new tensor under a parameter's or buffer's name: its "
            "graphs still read the tensor they were captured with, so training goes on with stale weights or state.",
            {}}) {}

 protected:
  void Read(const TraceAnalysis& analysis, const BoundOptions&, std::vector<Finding>* findings) const override {
    const trace::Trace& trace = analysis.trace();
    // One finding per graphed module and role: a checkpoint reloaded by rebinding moves every parameter at once.
    std::map<std::pair<uint64_t, std::string>, std::vector<const ProbeEvent*>> moved;
    for (const ProbeEvent& event : trace.probe_events) {
      if (event.kind != ProbeEventKind::kStateRebound) continue;
      const std::string role(trace.String(event.type));
      if (role == "parameter" || role == "buffer") moved[{event.graph, role}].push_back(&event);
    }
    for (const auto& [key, events] : moved) {
      const std::string& role = key.second;
      const ProbeEvent& first = *events.front();
      std::vector<std::string> names;
      for (const ProbeEvent* e : events) names.emplace_back(trace.String(e->text));
      Finding finding = NewFinding();
      const bool parameter = role == "parameter";
      finding.message = absl::StrCat(
          events.size() == 1
              ? absl::StrCat("The ", role, " ", names[0],
                             " of a module graphed by "
                             "make_graphed_callables is a new tensor")
              : absl::StrCat(events.size(), " ", role, "s of a module graphed by make_graphed_callables (",
                             absl::StrJoin(names.begin(), names.begin() + std::min<size_t>(3, names.size()), ", "),
                             names.size() > 3 ? ", ..." : "", ") are new tensors"),
          trace::CapturedAt(trace, first.graph), ": its graphs still read the ",
          events.size() == 1 ? "tensor" : "tensors", " they were captured with, so ",
          parameter ? "the forward computes with the old weights and their gradients go to the old tensors, while "
                      "the optimizer steps the new ones"
                    : "the graphs read and update the old memory, and the module's buffer no longer changes",
          ".");
      for (size_t i = 0; i < events.size() && i < 5; ++i) {
        finding.evidence.push_back(absl::StrFormat("%s %s: 0x%x at capture, 0x%x now", role, names[i], events[i]->value,
                                                   events[i]->value_now));
      }
      if (events.size() > 5) finding.evidence.push_back(absl::StrCat("and ", events.size() - 5, " more"));
      finding.where = ProbeEventLocation(trace, first);
      finding.where.key = names[0];
      finding.fix = parameter
                        ? "Copy new values into the parameters the graphs were captured with "
                          "(model.load_state_dict(state), which copies in place, or p.data.copy_(new)) instead of "
                          "assigning new nn.Parameter objects; or call make_graphed_callables again after loading."
                        : "Update buffers in place (buf.copy_(new), buf.add_(1)) instead of assigning new tensors; or "
                          "call make_graphed_callables again after the change.";
      findings->push_back(std::move(finding));
    }
  }
};

}  // namespace

std::unique_ptr<Check> NewAddressDriftCheck() { return std::make_unique<AddressDriftCheck>(); }

}  // namespace graphcheck::analyzers
