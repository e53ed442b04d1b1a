#include "validators/numerics/replay_mismatch.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/trace/events.h"
#include "core/trace/python_frames.h"
#include "validators/numerics/numerics_rule.h"
#include "validators/numerics/shadow_verdict.h"

namespace graphcheck {
namespace {

bool ShadowedReplays(const trace::Trace& trace) {
  return std::any_of(
             trace.shadow_comparisons.begin(), trace.shadow_comparisons.end(),
             [](const trace::ShadowComparison& c) { return c.subject == trace::ShadowSubject::kCapturedRegion; }) ||
         std::any_of(trace.probe_events.begin(), trace.probe_events.end(),
                     [](const trace::ProbeEvent& e) { return e.kind == trace::ProbeEventKind::kShadowSkipped; });
}

// host-value-frozen and grad-detached name the cause of a graph whose baked-in host values changed.
bool HostValueChanged(const trace::Trace& trace, uint64_t graph) {
  return std::any_of(trace.probe_events.begin(), trace.probe_events.end(), [&](const trace::ProbeEvent& e) {
    return e.kind == trace::ProbeEventKind::kHostValueChanged && e.graph == graph;
  });
}

}  // namespace

const CheckInfo& ReplayMismatchCheck::info() const {
  static const CheckInfo kInfo{
      "replay-mismatch",
      "A replay leaves other values than its captured code run eagerly",
      Severity::kError,
      CheckArea::kNumerics,
      "Under `graphcheck run --shadow N`, the first N replays of each of the program's captures are compared with "
      "the capture's body run eagerly from the same state: parameters, gradients, optimizer state, buffers and "
      "outputs must agree within the numerics rule.",
      NumericsRuleOptions()};
  return kInfo;
}

bool ReplayMismatchCheck::CanRun(const CheckInputs& inputs) const {
  return inputs.trace != nullptr && ShadowedReplays(*inputs.trace);
}

void ReplayMismatchCheck::Run(const CheckInputs& inputs, const BoundOptions& options,
                              std::vector<Finding>* findings) const {
  const trace::Trace& trace = *inputs.trace;
  for (const ShadowVerdict& verdict :
       JudgeShadowComparisons(trace, trace::ShadowSubject::kCapturedRegion, /*host_draws=*/false, options)) {
    if (verdict.differing == 0 || HostValueChanged(trace, verdict.owner)) continue;
    const trace::ShadowComparison& worst = *verdict.worst;
    const std::string call(trace.String(worst.module_type));
    Finding finding = NewFinding();
    finding.message = absl::StrFormat(
        "Replay %d of the graph%s differs from %s run eagerly from the same state: %d of %d tensors beyond the "
        "numerics rule, the worst %s (%d of %d compared replays differ).",
        worst.call, trace::CapturedAt(trace, verdict.owner), call, verdict.worst_differing, verdict.worst_tensors,
        verdict.worst_name, verdict.differing, verdict.compared);
    finding.evidence = {absl::StrCat(
        "graphcheck run --shadow: before the replay, ", call,
        " ran eagerly twice from the state the replay started from (every tensor it wrote and every random source "
        "put back after each run); the replay was compared with the first run, the second gives eager's own spread")};
    for (const std::string& line : verdict.table) finding.evidence.push_back(line);
    finding.where.key = call;
    finding.where.python = trace::PythonFrames(trace, worst.stack);
    finding.fix =
        "Find what the graph baked in that the code reads afresh each time: Python numbers (a float learning rate, "
        "a counter), tensors the program replaced instead of updating in place (copy_), branches on values, "
        "gradients set to None between replays, random numbers drawn on the host.";
    findings->push_back(std::move(finding));
  }
  for (const trace::ProbeEvent& event : trace.probe_events) {
    if (event.kind != trace::ProbeEventKind::kShadowSkipped) continue;
    Finding finding = NewFinding();
    finding.severity = Severity::kNote;
    finding.message = absl::StrCat("--shadow did not compare the replays of the graph",
                                   trace::CapturedAt(trace, event.graph), ": ", trace.String(event.text), ".");
    finding.where.python = trace::PythonFrames(trace, event.stack);
    finding.where.key = std::string(trace.String(event.type));
    finding.fix =
        "To have its replays compared, capture a block that runs on its own (no return, yield or break out of the "
        "with block); a process group's collectives cannot be compared on one process.";
    findings->push_back(std::move(finding));
  }
}

}  // namespace graphcheck
