// unsafe-api-in-capture: a call that capture forbids but that does not synchronize: a stream or event query on the
// capturing stream, or any unsafe call (query, synchronize, allocation) from another thread during a global-mode
// capture, such as NCCL's watchdog polling events or a garbage-collector finalizer freeing memory.
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

class UnsafeApiInCaptureCheck : public CaptureProblemCheck {
 public:
  UnsafeApiInCaptureCheck()
      : CaptureProblemCheck(
            {check_id::kUnsafeApiInCapture,
             "A call that capture forbids ran during capture (possibly from another thread)",
             Severity::kError,
             CheckArea::kCapture,
             "A stream or event query ran on a capturing stream, or another thread made an unsafe CUDA call while "
             "a global-mode capture was under way (NCCL watchdog, pin-memory thread, garbage-collector finalizers). "
             "The capture is invalidated.",
             {}},
            CaptureCause::kUnsafeApi) {}

 protected:
  void Describe(const TraceAnalysis& analysis, const CaptureProblem& problem, Finding* finding) const override {
    if (problem.other_thread) {
      // The thread's name (format 1.7) says whose it is: PyTorch names NCCL's watchdog pt_nccl_watchdg.
      const absl::string_view name = analysis.trace().ThreadNameOf(*finding->where.thread_id);
      const std::string thread =
          name == "pt_nccl_watchdg"
              ? absl::StrCat("NCCL's watchdog thread ", *finding->where.thread_id, " (pt_nccl_watchdg)")
              : absl::StrCat("thread ", *finding->where.thread_id, name.empty() ? "" : absl::StrCat(" (", name, ")"));
      finding->message = absl::StrCat(
          finding->where.api, OperatorClause(finding->where), " ran on ", thread,
          " while another thread was capturing in global mode, which forbids such calls from every thread; "
          "the capture was invalidated.");
      finding->fix =
          "Capture with capture_error_mode='thread_local' (torch.cuda.graph(g, capture_error_mode='thread_local')) "
          "so other threads' calls do not interfere, or keep other threads off CUDA during capture: "
          "TORCH_NCCL_ASYNC_ERROR_HANDLING=0 for NCCL's watchdog, gc.collect() then gc.disable() around capture for "
          "finalizers (Transformer Engine does this), no pin-memory thread while capturing.";
    } else {
      finding->message = absl::StrCat(finding->where.api, OperatorClause(finding->where),
                                      " queried a capturing stream or an event recorded in the capture; captured "
                                      "work has not run, so capture forbids the query.");
      finding->fix =
          "Do not poll streams or events inside the captured region (torch.cuda.Event.query(), "
          "Stream.query()); move the check before or after the graph.";
    }
  }
};

}  // namespace

std::unique_ptr<Check> NewUnsafeApiInCaptureCheck() { return std::make_unique<UnsafeApiInCaptureCheck>(); }

}  // namespace graphcheck::checks
