// warmup-insufficient: lazy initialisation first happened inside a capture: a module load (lazy kernel loading), a
// context creation, or a library handle or workspace allocation (cuBLAS, cuBLASLt, cuDNN) seen in the backtrace of an
// allocation. Warmup did not run the captured code, or ran it on another stream.
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

class WarmupInsufficientCheck : public CaptureProblemCheck {
 public:
  WarmupInsufficientCheck()
      : CaptureProblemCheck(
            {check_id::kWarmupInsufficient,
             "Lazy initialisation happened during CUDA graph capture",
             Severity::kError,
             CheckArea::kCapture,
             "Something that is initialised on first use (a cuBLAS or cuDNN handle or workspace, a lazily loaded "
             "kernel module, the context) was first used inside a capture. Warmup before capture did not run the "
             "same code on the same stream.",
             {}},
            CaptureCause::kLazyInit) {}

 protected:
  void Describe(const TraceAnalysis& analysis, const CaptureProblem& problem, Finding* finding) const override {
    finding->message =
        absl::StrCat(problem.resource, " was initialised during a CUDA graph capture (", finding->where.api,
                     OperatorClause(finding->where), "): warmup did not run this code before capture.");
    finding->fix =
        "Warm up the exact code you capture, on the stream you capture on, before capturing: 3 iterations for most "
        "models, 11 with DDP (torch.cuda.make_graphed_callables(num_warmup_iters=...)). Set "
        "CUDA_MODULE_LOADING=EAGER when kernel modules load lazily inside capture.";
  }
};

}  // namespace

std::unique_ptr<Check> NewWarmupInsufficientCheck() { return std::make_unique<WarmupInsufficientCheck>(); }

}  // namespace graphcheck::checks
