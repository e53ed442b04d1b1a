// sync-in-region: synchronizing calls inside the eager steps of the region the user wants graphed (the NVTX range
// `region`, else each step found by repetition). They work in eager mode and are the calls that will fail capture:
// Tensor.item(), .cpu(), nonzero, boolean masks. One finding per call site, with how many steps hit it. The
// synchronizations of the graph machinery itself (torch.cuda.graph before it captures, make_graphed_callables' warmup,
// torch.compile recording its graphs) are not the user's to remove, and are left out when the Python stack shows them.
// In a program that also replays graphs in steps, the eager steps are another phase (a reference run before the
// graphed loop, an evaluation loop): their synchronizations are a note, not what keeps the graphed loop from working.
// This check forecasts a capture; where the capture was tried, what it did is the fact: make_graphed_callables' warmup
// is captured right after, and a synchronization a capture already failed at is sync-in-capture's.
#include "absl/strings/str_cat.h"
#include "checks/checks.h"
#include "checks/trace/internal/capture_problem_check.h"
#include "checks/trace/internal/eager_phase.h"
#include "core/check_ids.h"
#include "core/plural.h"
#include "trace/api_names.h"

namespace graphcheck::checks {

using analysis::CalledByGraphMachinery;
using analysis::CallSites;
using analysis::CaptureCause;
using analysis::CaptureProblem;
using analysis::InGraphedCallablesWarmup;
using analysis::Iterations;
using analysis::OperatorClause;
using analysis::StepCallSites;
using analysis::TraceAnalysis;

namespace {

// Whether a capture failed at this synchronization: the same API and operator, at the same line of the program where
// the call has one (`graphcheck check`'s engine has none).
bool CaptureFailedAt(const TraceAnalysis& analysis, const Location& site) {
  const SourceFrame* site_line = FirstUserFrame(site);
  for (const CaptureProblem& problem : analysis.captures().problems()) {
    if (problem.cause != CaptureCause::kSync || !problem.failed) continue;
    const Location failed = analysis.Locate(problem.call);
    if (failed.api != site.api || failed.torch_op != site.torch_op) continue;
    const SourceFrame* failed_line = FirstUserFrame(failed);
    if (site_line == nullptr && failed_line == nullptr) return true;
    if (site_line != nullptr && failed_line != nullptr && site_line->file == failed_line->file &&
        site_line->line == failed_line->line) {
      return true;
    }
  }
  return false;
}

class SyncInRegionCheck : public CheckOf<TraceAnalysis> {
 public:
  SyncInRegionCheck()
      : CheckOf(CheckInfo{
            check_id::kSyncInRegion,
            "The region to graph synchronizes with the host",
            Severity::kWarning,
            CheckArea::kEagerRegion,
            "A synchronizing call (stream or device synchronize, a synchronous copy) runs inside the steps you want "
            "to graph. It works eagerly but fails capture; Tensor.item(), .cpu(), nonzero and boolean masks are the "
            "usual sources.",
            {}}) {}

 protected:
  void Read(const TraceAnalysis& analysis, const BoundOptions& options, std::vector<Finding>* findings) const override {
    const trace::Trace& trace = analysis.trace();
    const Iterations& iterations = analysis.steps();
    const CallSites sites =
        StepCallSites(trace, iterations.eager, [](const trace::Trace& trace, const trace::ApiCall& call) {
          return trace::IsSynchronizing(call.kind) && !CalledByGraphMachinery(trace, call) &&
                 !InGraphedCallablesWarmup(trace, call);
        });
    for (const CallSites::Site& site : sites.sites()) {
      Finding finding = NewFinding();
      finding.where = analysis.Locate(site.first_call);
      if (CaptureFailedAt(analysis, finding.where)) continue;
      finding.message = absl::StrCat(
          finding.where.api, OperatorClause(finding.where), " synchronizes with the GPU in ", site.groups, " of ",
          Plural(iterations.eager.size(), "step of the region to graph", "steps of the region to graph"),
          "; inside a capture it would fail (900).");
      finding.evidence.push_back(
          absl::StrCat(Plural(site.calls, "call", "calls"), " from this call site; steps from ", iterations.source));
      NoteWhenAnotherPhase(iterations, &finding);
      finding.fix =
          "Remove the synchronization from the step: keep scalars on the GPU (torch.where, clamp, masks that keep "
          "shapes static), log with a lag (copy with non_blocking=True into pinned memory and read it a step later), "
          "or leave this part outside the graph.";
      findings->push_back(std::move(finding));
    }
  }
};

}  // namespace

std::unique_ptr<Check> NewSyncInRegionCheck() { return std::make_unique<SyncInRegionCheck>(); }

}  // namespace graphcheck::checks
