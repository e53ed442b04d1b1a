// sync-in-capture: a call that waits for the GPU (stream, event or device synchronize, a synchronous copy or memset)
// ran inside a capture. CUDA refuses it (900) and invalidates the capture; the capture end then returns 901.
#include "absl/strings/str_cat.h"
#include "checks/checks.h"
#include "checks/trace/internal/capture_problem_check.h"
#include "core/check_ids.h"

namespace graphcheck::checks {

using analysis::CaptureCause;
using analysis::CaptureProblem;
using analysis::OperatorClause;
using analysis::TraceAnalysis;

namespace {

class SyncInCaptureCheck : public CaptureProblemCheck {
 public:
  SyncInCaptureCheck()
      : CaptureProblemCheck(
            {check_id::kSyncInCapture,
             "A synchronizing call ran during CUDA graph capture",
             Severity::kError,
             CheckArea::kCapture,
             "A stream, event or device synchronization, or a synchronous copy, ran while a stream was capturing. "
             "CUDA refuses it (900) and invalidates the capture. Tensor.item(), .cpu(), nonzero and boolean masks "
             "are the usual sources.",
             {}},
            CaptureCause::kSync) {}

 protected:
  void Describe(const TraceAnalysis& analysis, const CaptureProblem& problem, Finding* finding) const override {
    const trace::Trace& trace = analysis.trace();
    const trace::CallDetail& call = trace.Detail(trace.api_calls[problem.call]);
    finding->message = absl::StrCat(finding->where.api, OperatorClause(finding->where),
                                    " waits for the GPU inside a CUDA graph capture; a graph cannot contain a "
                                    "host-device synchronization.");
    if (call.host_memory == trace::HostMemory::kPageable) {
      finding->evidence.push_back("the copy's host memory is pageable");
    }
    finding->fix =
        "Move the synchronization out of the captured region: keep values on the GPU (torch.where instead of "
        "`if t.item():`, a preallocated static output instead of .cpu()), or end the graph before this operation "
        "and run it eagerly. torch.cuda.set_sync_debug_mode('warn') lists the synchronizing calls in eager mode.";
  }
};

}  // namespace

std::unique_ptr<Check> NewSyncInCaptureCheck() { return std::make_unique<SyncInCaptureCheck>(); }

}  // namespace graphcheck::checks
