// alloc-in-capture: cudaMalloc, cudaFree or a pinned host allocation on the capturing thread during a capture that
// is not in relaxed mode. Allocation is not a graph operation: CUDA refuses it, and a successful one would not be
// repeated by replay.
#include "absl/strings/str_cat.h"
#include "checks/checks.h"
#include "checks/trace/internal/capture_problem_check.h"
#include "core/check_ids.h"
#include "core/plural.h"

namespace graphcheck::checks {

using analysis::CaptureCause;
using analysis::CaptureProblem;
using analysis::OperatorClause;
using analysis::TraceAnalysis;

namespace {

class AllocInCaptureCheck : public CaptureProblemCheck {
 public:
  AllocInCaptureCheck()
      : CaptureProblemCheck(
            {check_id::kAllocInCapture,
             "Memory was allocated or freed during CUDA graph capture",
             Severity::kError,
             CheckArea::kCapture,
             "cudaMalloc, cudaFree, cudaMallocHost or cudaHostRegister ran on the capturing thread during capture. "
             "CUDA refuses them outside relaxed mode, and replay would not repeat them.",
             {}},
            CaptureCause::kAlloc) {}

 protected:
  void Describe(const TraceAnalysis& analysis, const CaptureProblem& problem, Finding* finding) const override {
    const trace::Trace& trace = analysis.trace();
    const uint64_t bytes = trace.Detail(trace.api_calls[problem.call]).bytes;
    finding->message = absl::StrCat(finding->where.api, OperatorClause(finding->where),
                                    " allocated or freed memory during a CUDA graph capture");
    if (bytes != 0) absl::StrAppend(&finding->message, " (", Plural(bytes, "byte", "bytes"), ")");
    absl::StrAppend(&finding->message, "; allocation is not a graph operation.");
    finding->fix =
        "Allocate before capture: warm up the exact captured code first so PyTorch's caching allocator already holds "
        "the memory (allocations during torch.cuda.graph come from the graph's private pool); do not call "
        "torch.cuda.empty_cache(), pin_memory() or create new CUDA tensors outside the allocator while capturing; "
        "use stream-ordered cudaMallocAsync when an allocation must be part of the graph.";
  }
};

}  // namespace

std::unique_ptr<Check> NewAllocInCaptureCheck() { return std::make_unique<AllocInCaptureCheck>(); }

}  // namespace graphcheck::checks
