// legacy-stream-in-capture: work on the legacy default stream during a capture (906
// cudaErrorStreamCaptureImplicit when the capturing stream is blocking; silently left out of the graph otherwise), or a
// capture begun on the legacy stream.
#include <algorithm>

#include "absl/strings/match.h"
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

// Whether the call came from the autograd engine's backward (a stream wait for an AccumulateGrad node).
bool InAutogradEngine(const Location& where) {
  return std::any_of(where.backtrace.begin(), where.backtrace.end(),
                     [](const std::string& frame) { return absl::StrContains(frame, "torch::autograd::Engine"); });
}

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
    if (InAutogradEngine(finding->where)) {
      // Seen on an H200 (torch 2.11): eager steps, then make_graphed_callables with the last step's `loss` still
      // alive. Its autograd graph keeps the parameters' AccumulateGrad nodes, made on the default stream, and the
      // backward capture waits on that stream; `del loss` before the capture fixes it (PyTorch's stderr warning
      // "AccumulateGrad node's stream does not match" says the same).
      finding->message = absl::StrCat(finding->message,
                                      " The autograd engine waited on the stream an AccumulateGrad node was made on: "
                                      "an autograd graph from before the capture is still alive.");
      finding->fix =
          "Drop every reference to autograd graphs of the eager steps before capturing (the last step's loss: "
          "`del loss`; outputs kept with their graph: keep `.detach()`ed copies), so the parameters' AccumulateGrad "
          "nodes are made anew on the capture's stream; build DDP inside `with torch.cuda.stream(side_stream)` and "
          "run the eager steps there too.";
      return;
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
