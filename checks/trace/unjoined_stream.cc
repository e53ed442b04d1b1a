// unjoined-stream: the capture end failed with 904 because streams forked from the capturing stream (by waiting on
// an event recorded in the capture) still had work that the capturing stream never waited for. Names the streams.
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "checks/checks.h"
#include "checks/trace/internal/capture_problem_check.h"
#include "core/check_ids.h"
#include "core/plural.h"

namespace graphcheck::checks {

using analysis::CaptureCause;
using analysis::CaptureProblem;
using analysis::TraceAnalysis;

namespace {

class UnjoinedStreamCheck : public CaptureProblemCheck {
 public:
  UnjoinedStreamCheck()
      : CaptureProblemCheck(
            {check_id::kUnjoinedStream,
             "A stream forked into the capture was not joined back",
             Severity::kError,
             CheckArea::kCapture,
             "A side stream joined the capture by waiting on a captured event, and the capturing stream did not wait "
             "for its last work before the capture ended: the end fails with 904 and no graph is made.",
             {}},
            CaptureCause::kUnjoinedStream) {}

 protected:
  void Describe(const TraceAnalysis& analysis, const CaptureProblem& problem, Finding* finding) const override {
    if (problem.streams.empty()) {
      finding->message = absl::StrCat(finding->where.api,
                                      " failed with 904: a stream forked from the capturing "
                                      "stream was not joined back (the trace does not show which).");
    } else {
      finding->message =
          absl::StrCat(finding->where.api, " failed with 904: ", problem.streams.size() == 1 ? "stream " : "streams ",
                       absl::StrJoin(problem.streams, ", "), " forked from the capturing stream and ",
                       problem.streams.size() == 1 ? "was" : "were", " not joined back before the end.");
      finding->evidence.push_back(absl::StrCat("forked and not joined: ", absl::StrJoin(problem.streams, ", ")));
    }
    finding->fix =
        "Before the capture ends, make the capturing stream wait for every side stream it forked: "
        "capture_stream.wait_stream(side_stream) (an event recorded on the side stream after its last work, waited "
        "on by the capturing stream).";
  }
};

}  // namespace

std::unique_ptr<Check> NewUnjoinedStreamCheck() { return std::make_unique<UnjoinedStreamCheck>(); }

}  // namespace graphcheck::checks
