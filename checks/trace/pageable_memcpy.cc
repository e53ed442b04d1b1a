// pageable-memcpy: a host<->device cudaMemcpyAsync with pageable (not pinned) host memory. Inside a capture CUDA
// refuses it; in the eager steps of the region to graph it is staged through a driver buffer and blocks the host, so
// it is a latent blocker of that region (reported as a note). Copies outside the steps (loading weights at start-up)
// are not reported.
#include "absl/strings/str_cat.h"
#include "checks/checks.h"
#include "checks/trace/internal/capture_problem_check.h"
#include "core/check_ids.h"
#include "core/plural.h"

namespace graphcheck::checks {

using analysis::CallSites;
using analysis::CaptureCause;
using analysis::CaptureProblem;
using analysis::Iterations;
using analysis::OperatorClause;
using analysis::StepCallSites;
using analysis::TraceAnalysis;

namespace {

constexpr char kFix[] =
    "Copy through pinned memory: allocate host tensors with pin_memory=True (or DataLoader(pin_memory=True)) and "
    "copy with non_blocking=True; for a graph, copy new inputs into a static device tensor (static_input.copy_(x)) "
    "before replay, outside the graph.";

class PageableMemcpyCheck : public CaptureProblemCheck {
 public:
  PageableMemcpyCheck()
      : CaptureProblemCheck(
            {check_id::kPageableMemcpy,
             "An asynchronous copy used pageable host memory",
             Severity::kError,
             CheckArea::kCapture,
             "cudaMemcpyAsync between the host and the device used pageable host memory. Inside a capture CUDA "
             "refuses it; in eager steps the copy blocks the host and would break capture of that step.",
             {}},
            CaptureCause::kPageableMemcpy) {}

 protected:
  void Read(const TraceAnalysis& analysis, const BoundOptions& options, std::vector<Finding>* findings) const override {
    CaptureProblemCheck::Read(analysis, options, findings);
    // Eager copies in the steps: one note per call site.
    const trace::Trace& trace = analysis.trace();
    const Iterations& iterations = analysis.steps();
    const CallSites sites =
        StepCallSites(trace, iterations.eager, [](const trace::Trace& trace, const trace::ApiCall& call) {
          return call.kind == trace::ApiKind::kMemcpyAsync &&
                 trace.Detail(call).host_memory == trace::HostMemory::kPageable;
        });
    for (const CallSites::Site& site : sites.sites()) {
      Finding finding = NewFinding();
      finding.severity = Severity::kNote;
      finding.where = analysis.Locate(site.first_call);
      finding.message = absl::StrCat(finding.where.api, OperatorClause(finding.where),
                                     " copies between pageable host memory and the device in the steps of the region "
                                     "to graph: the host waits for it, and the same copy inside a capture would fail.");
      finding.evidence.push_back(absl::StrCat(
          Plural(site.calls, "such copy", "such copies"), " from this call site in ", site.groups, " of ",
          Plural(iterations.eager.size(), "step", "steps"), ", ",
          Plural(trace.Detail(trace.api_calls[site.first_call]).bytes, "byte", "bytes"), " the first time"));
      finding.evidence.push_back(absl::StrCat("steps from ", iterations.source));
      finding.fix = kFix;
      findings->push_back(std::move(finding));
    }
  }

  void Describe(const TraceAnalysis& analysis, const CaptureProblem& problem, Finding* finding) const override {
    finding->message = absl::StrCat(finding->where.api, OperatorClause(finding->where),
                                    " copied pageable host memory during a CUDA graph capture; a graph can only copy "
                                    "from pinned or device memory.");
    finding->fix = kFix;
  }
};

}  // namespace

std::unique_ptr<Check> NewPageableMemcpyCheck() { return std::make_unique<PageableMemcpyCheck>(); }

}  // namespace graphcheck::checks
