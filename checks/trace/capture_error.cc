// capture-error: a call failed with a stream-capture error (900-910) that no earlier call in the trace explains. The
// errors that have an explanation are reported by the check of their root cause (sync-in-capture, unjoined-stream,
// ...) with the error as a consequence; this check reports the rest, naming the code and what usually causes it.
#include "absl/strings/str_cat.h"
#include "analysis/capture_error_table.h"
#include "checks/checks.h"
#include "checks/trace/internal/capture_problem_check.h"
#include "core/check_ids.h"

namespace graphcheck::checks {

using analysis::CaptureCause;
using analysis::CaptureErrorCode;
using analysis::CaptureProblem;
using analysis::DescribeReturnCode;
using analysis::FindCaptureError;
using analysis::TraceAnalysis;

namespace {

class CaptureErrorCheck : public CaptureProblemCheck {
 public:
  CaptureErrorCheck()
      : CaptureProblemCheck(
            {check_id::kCaptureError,
             "A CUDA call failed with a stream-capture error",
             Severity::kError,
             CheckArea::kCapture,
             "A call returned one of CUDA's stream-capture errors (900-910) and no earlier recorded call explains "
             "it. Errors with a known root cause are reported by that cause's check instead.",
             {}},
            CaptureCause::kUnexplained) {}

 protected:
  void Describe(const TraceAnalysis& analysis, const CaptureProblem& problem, Finding* finding) const override {
    const trace::Trace& trace = analysis.trace();
    const int32_t return_code = trace.Detail(trace.api_calls[problem.call]).return_code;
    const CaptureErrorCode* error = FindCaptureError(return_code);
    finding->message = absl::StrCat(finding->where.api, " failed with ", DescribeReturnCode(return_code), " (\"",
                                    error ? error->description : "", "\"): ", error ? error->meaning : "",
                                    "; no earlier call in the trace explains it.");
    finding->fix = std::string(error ? error->fix : "");
  }
};

}  // namespace

std::unique_ptr<Check> NewCaptureErrorCheck() { return std::make_unique<CaptureErrorCheck>(); }

}  // namespace graphcheck::checks
