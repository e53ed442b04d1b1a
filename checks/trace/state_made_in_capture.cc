// state-made-in-capture: state the program keeps from one step to the next was made inside a capture, in the graph's
// memory pool, so every replay makes it again from what it was at capture. Two ways, both seen by the Python probe at
// the capture's end (its state-made-in-capture events):
// - the captured code replaced a module's buffer or parameter (`self.ema = self.ema * 0.9 + x.mean(0) * 0.1`) and the
//   graph reads the tensor it replaced (the recorder's manifest names its memory): each replay computes the new value
//   from the old tensor as it was at capture, never from the last replay's result;
// - an optimizer's first step ran inside the capture and created its state (Adam's exp_avg and step, SGD's momentum
//   buffer) there: the graph holds the creation too, so each replay resets the state before the update.
// A replaced tensor the graph does not read (a cache rebuilt from scratch) carries nothing over and is left alone.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "analysis/graph_contract.h"
#include "analysis/python_probe.h"
#include "analysis/trace_analysis.h"
#include "checks/checks.h"
#include "core/check_ids.h"

namespace graphcheck::checks {

using analysis::GraphContract;
using analysis::ProbeEventLocation;
using analysis::ReadGraphContracts;
using analysis::TraceAnalysis;

namespace {

using trace::MadeStateRole;
using trace::StateMadeInCapture;

constexpr size_t kMaxNamesShown = 8;

// Whether the graph's nodes name memory of the tensor that lived at [address, address + bytes).
bool GraphNames(const GraphContract& contract, uint64_t address, uint64_t bytes) {
  if (contract.manifest == nullptr) return false;
  const std::vector<trace::GraphMemoryUse>& uses = contract.manifest->uses;  // by address
  auto it = std::lower_bound(uses.begin(), uses.end(), address,
                             [](const trace::GraphMemoryUse& use, uint64_t a) { return use.address < a; });
  return it != uses.end() && it->address < address + std::max<uint64_t>(bytes, 1);
}

class StateMadeInCaptureCheck : public CheckOf<TraceAnalysis> {
 public:
  StateMadeInCaptureCheck()
      : CheckOf(CheckInfo{check_id::kStateMadeInCapture,
                          "State kept across steps is made inside a capture, and every replay makes it again",
                          Severity::kError,
                          CheckArea::kState,
                          "A buffer or parameter the captured code replaces (`self.ema = self.ema * 0.9 + ...`), or "
                          "optimizer state created by a first step inside the capture, lives in the graph's pool: "
                          "each replay makes it again from what it was at capture, so the state never carries from "
                          "one step to the next.",
                          {}}) {}

 protected:
  void Read(const TraceAnalysis& analysis, const BoundOptions&, std::vector<Finding>* findings) const override {
    const trace::Trace& trace = analysis.trace();
    const std::vector<StateMadeInCapture>& events = analysis.probe().records().state_made_in_capture;
    if (events.empty()) return;
    const std::vector<GraphContract> contracts = ReadGraphContracts(analysis);
    absl::flat_hash_map<uint64_t, const GraphContract*> by_python_graph;
    for (const GraphContract& contract : contracts) {
      if (contract.tensors != nullptr) by_python_graph.emplace(contract.tensors->graph, &contract);
    }
    // Replaced tensors the graph reads, grouped per graph: one finding at the first one's line.
    absl::flat_hash_map<uint64_t, std::vector<const StateMadeInCapture*>> replaced;
    std::vector<uint64_t> graph_order;
    for (const StateMadeInCapture& event : events) {
      if (event.role == MadeStateRole::kOptimizerState) {
        findings->push_back(OptimizerStateMade(trace, event));
        continue;
      }
      auto contract = by_python_graph.find(event.graph);
      if (contract == by_python_graph.end() || !GraphNames(*contract->second, event.address_before, event.bytes)) {
        continue;
      }
      auto& list = replaced[event.graph];
      if (list.empty()) graph_order.push_back(event.graph);
      list.push_back(&event);
    }
    for (uint64_t graph : graph_order) findings->push_back(StateReplaced(trace, replaced[graph]));
  }

 private:
  Finding OptimizerStateMade(const trace::Trace& trace, const StateMadeInCapture& event) const {
    Finding finding = NewFinding();
    finding.message = absl::StrCat(
        "This optimizer step ran for the first time inside the capture", trace::CapturedAt(trace, event.graph),
        " and created the optimizer's state there (", event.tensors, event.tensors == 1 ? " tensor" : " tensors",
        ", in the graph's memory pool): the graph holds the creation too, so every replay sets the state back to its "
        "initial value (zeros; the gradient, for SGD's momentum) before the update, and the optimizer never "
        "accumulates its moments or momentum.");
    finding.evidence.push_back(absl::StrCat("made inside the capture: ", event.names));
    finding.evidence.push_back(
        absl::StrFormat("the first at 0x%x, inside the graph's private memory pool", event.address_now));
    finding.where = ProbeEventLocation(trace, event.at);
    finding.fix =
        "Let the optimizer step in the warm-up before the capture, on the side stream the warm-up runs on (PyTorch's "
        "whole-network recipe runs a few full iterations, optimizer.step() included), so that its state exists "
        "before the capture and the graph updates it in place.";
    return finding;
  }

  Finding StateReplaced(const trace::Trace& trace, const std::vector<const StateMadeInCapture*>& events) const {
    const StateMadeInCapture& first = *events.front();
    const absl::string_view role = trace::MadeStateRoleName(first.role);
    std::vector<std::string> names;
    for (size_t i = 0; i < events.size() && i < kMaxNamesShown; ++i) {
      names.push_back(absl::StrCat(trace::MadeStateRoleName(events[i]->role), " ", events[i]->names));
    }
    if (events.size() > kMaxNamesShown) names.push_back(absl::StrCat("and ", events.size() - kMaxNamesShown, " more"));
    Finding finding = NewFinding();
    finding.message = absl::StrCat(
        "This line replaces the ", role, " ", first.names,
        events.size() > 1 ? absl::StrCat(" (and ", events.size() - 1, " more)") : "", " inside the capture",
        trace::CapturedAt(trace, first.graph),
        " with a new tensor: the graph reads the tensor it replaced, as it was at capture, and writes the new one in "
        "its own memory pool, so every replay computes it again from the value before the capture; the state never "
        "carries from one step to the next, and the old tensor's memory is the allocator's once nothing holds it.");
    finding.evidence.push_back(
        absl::StrCat("replaced inside the capture and read by the graph: ", absl::StrJoin(names, ", ")));
    finding.evidence.push_back(absl::StrFormat("%s %s: 0x%x before (read by the graph), 0x%x now (its pool)", role,
                                               first.names, first.address_before, first.address_now));
    finding.where = ProbeEventLocation(trace, first.at);
    finding.where.key = std::string(first.names);
    finding.fix =
        "Update state in place inside captured code, so that the graph reads and writes the same memory at every "
        "replay: self.ema.mul_(0.9).add_(x.mean(0), alpha=0.1), or self.ema.copy_(new_value).";
    return finding;
  }
};

}  // namespace

std::unique_ptr<Check> NewStateMadeInCaptureCheck() { return std::make_unique<StateMadeInCaptureCheck>(); }

}  // namespace graphcheck::checks
