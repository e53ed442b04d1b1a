// legacy-stream-in-capture: work on the legacy default stream during a capture (906
// cudaErrorStreamCaptureImplicit when the capturing stream is blocking; silently left out of the graph otherwise), or a
// capture begun on the legacy stream.
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

class LegacyStreamInCaptureCheck : public CaptureProblemCheck {
 public:
  LegacyStreamInCaptureCheck()
      : CaptureProblemCheck(
            {check_id::kLegacyStreamInCapture,
             "The legacy default stream was used during CUDA graph capture",
             Severity::kError,
             CheckArea::kCapture,
             "Work went to the legacy default stream while a stream was capturing, or capture began on it. With a "
             "blocking capture stream CUDA refuses it (906); otherwise the work runs eagerly and is missing from the "
             "graph. AccumulateGrad nodes and DDP built on the default stream are the usual sources.",
             {}},
            CaptureCause::kLegacyStream) {}

 protected:
  void Describe(const TraceAnalysis& analysis, const CaptureProblem& problem, Finding* finding) const override {
    const trace::ApiCall& call = analysis.trace().api_calls[problem.call];
    if (call.kind == trace::ApiKind::kCaptureBegin) {
      finding->message = absl::StrCat(finding->where.api,
                                      " tried to capture the legacy default stream, which "
                                      "cannot be captured.");
    } else {
      finding->message = absl::StrCat(
          finding->where.api, OperatorClause(finding->where), " used the legacy default stream during a capture; ",
          analysis.trace().Detail(call).return_code != 0 ? "it would make the legacy stream wait on the capturing "
                                                           "stream, so CUDA refused it."
                                                         : "the work runs eagerly and is not part of the graph.");
    }
    finding->fix =
        "Capture on a side stream (torch.cuda.graph does) and keep the captured code off the default stream: run "
        "warmup on the same side stream so autograd's AccumulateGrad nodes are created there, construct DDP inside "
        "`with torch.cuda.stream(side_stream)`, and do not pass stream 0 to extensions.";
  }
};

}  // namespace

std::unique_ptr<Check> NewLegacyStreamInCaptureCheck() { return std::make_unique<LegacyStreamInCaptureCheck>(); }

}  // namespace graphcheck::checks
