// replay-mismatch: a replay of the program's own capture leaves other values than the captured code run eagerly. Under
// `graphcheck run --shadow N`, for the first N replays of each of the program's captures, the Python probe runs the
// capture's body (one call or several statements, from the program's source, in a copy of the capturing frame's
// variables) eagerly twice from the state the replay starts from, puts back everything it wrote and every random
// source, replays, and compares every tensor the body wrote (parameters, optimizer state, buffers), every gradient
// and every output (trace::ShadowComparison, subject kCapturedRegion). A difference beyond the numerics rule means
// the graph no longer computes what its code does: a host value baked in at capture, a tensor the program replaced, a
// branch taken differently. Captures whose replays could not be compared are noted with the reason.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analysis/trace_analysis.h"
#include "checks/checks.h"
#include "checks/engine/numerics_rule.h"
#include "checks/engine/shadow_verdict.h"
#include "core/check.h"
#include "core/check_ids.h"
#include "core/plural.h"
#include "trace/events.h"
#include "trace/python_frames.h"

namespace graphcheck::checks {
namespace {

class ReplayMismatchCheck : public CheckOf<analysis::TraceAnalysis> {
 public:
  ReplayMismatchCheck();
  // A trace holding --shadow's comparisons of replays or its notes of replays it could not compare.
  bool CanRun(const CheckInputs& inputs) const override;

 protected:
  void Read(const analysis::TraceAnalysis& analysis, const BoundOptions& options,
            std::vector<Finding>* findings) const override;
};

}  // namespace
namespace {

bool ShadowedReplays(const analysis::TraceAnalysis& analysis) {
  const trace::Trace& trace = analysis.trace();
  return std::any_of(
             trace.shadow_comparisons.begin(), trace.shadow_comparisons.end(),
             [](const trace::ShadowComparison& c) { return c.subject == trace::ShadowSubject::kCapturedRegion; }) ||
         !analysis.probe().records().shadow_skipped.empty();
}

// host-value-frozen and grad-detached name the cause of a graph whose baked-in host values changed.
bool HostValueChanged(const trace::ProbeRecords& records, uint64_t graph) {
  return std::any_of(records.host_value_changes.begin(), records.host_value_changes.end(),
                     [&](const trace::HostValueChange& e) { return e.graph == graph; });
}

}  // namespace

ReplayMismatchCheck::ReplayMismatchCheck()
    : CheckOf(CheckInfo{
          check_id::kReplayMismatch, "A replay leaves other values than its captured code run eagerly",
          Severity::kError, CheckArea::kNumerics,
          "Under `graphcheck run --shadow N`, the first N replays of each of the program's captures are compared with "
          "the capture's body run eagerly from the same state: parameters, gradients, optimizer state, buffers and "
          "outputs must agree within the numerics rule.",
          NumericsRuleOptions()}) {}

bool ReplayMismatchCheck::CanRun(const CheckInputs& inputs) const {
  const analysis::TraceAnalysis* analysis = inputs.Find<analysis::TraceAnalysis>();
  return analysis != nullptr && ShadowedReplays(*analysis);
}

void ReplayMismatchCheck::Read(const analysis::TraceAnalysis& analysis, const BoundOptions& options,
                               std::vector<Finding>* findings) const {
  const trace::Trace& trace = analysis.trace();
  const trace::ProbeRecords& records = analysis.probe().records();
  for (const ShadowVerdict& verdict :
       JudgeShadowComparisons(trace, trace::ShadowSubject::kCapturedRegion, /*host_draws=*/false, options)) {
    if (verdict.differing == 0 || HostValueChanged(records, verdict.owner)) continue;
    const trace::ShadowComparison& worst = *verdict.worst;
    const std::string call(trace.String(worst.module_type));
    Finding finding = NewFinding();
    finding.message = absl::StrFormat(
        "Replay %d of the graph%s differs from %s run eagerly from the same state: %d of %s beyond the numerics "
        "rule, the worst %s (replays that differ: %d of %d compared).",
        worst.call, trace::CapturedAt(trace, verdict.owner), call, verdict.worst_differing,
        Plural(verdict.worst_tensors, "tensor", "tensors"), verdict.worst_name, verdict.differing, verdict.compared);
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
  for (const trace::ShadowSkipped& event : records.shadow_skipped) {
    Finding finding = NewFinding();
    finding.severity = Severity::kNote;
    finding.message = absl::StrCat("--shadow did not compare the replays of the graph",
                                   trace::CapturedAt(trace, event.graph), ": ", event.reason, ".");
    finding.where.python = trace::PythonFrames(trace, event.at.stack);
    finding.where.key = std::string(event.call);
    finding.fix =
        "To have its replays compared, capture a block that runs on its own (no return, yield or break out of the "
        "with block); a process group's collectives cannot be compared on one process.";
    findings->push_back(std::move(finding));
  }
}

std::unique_ptr<Check> NewReplayMismatchCheck() { return std::make_unique<ReplayMismatchCheck>(); }

}  // namespace graphcheck::checks
