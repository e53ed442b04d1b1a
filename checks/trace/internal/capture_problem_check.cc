#include "checks/trace/internal/capture_problem_check.h"

#include "absl/strings/str_cat.h"
#include "analysis/capture_error_table.h"
#include "analysis/ddp.h"
#include "analysis/torch_ops.h"
#include "checks/trace/probe_findings.h"
#include "core/plural.h"

namespace graphcheck::checks {

using analysis::AddLibraryAdvice;
using analysis::CaptureAnalysis;
using analysis::CaptureProblem;
using analysis::CaptureWindow;
using analysis::Consequence;
using analysis::DescribeCall;
using analysis::DescribeCapture;
using analysis::DescribeReturnCode;
using analysis::TraceAnalysis;

namespace {

std::string DescribeConsequence(const trace::Trace& trace, const Consequence& c) {
  if (c.return_code < 0) {
    return absl::StrCat("the capture on stream ", trace.api_calls[c.first_call].stream_id,
                        " never ended before the trace did");
  }
  std::string text = absl::StrCat(DescribeCall(trace, c.first_call), " returned ", DescribeReturnCode(c.return_code));
  if (c.count > 1) absl::StrAppend(&text, " (", c.count, " calls)");
  if (trace.api_calls[c.first_call].kind == trace::ApiKind::kCaptureEnd) absl::StrAppend(&text, ": no graph was made");
  return text;
}

}  // namespace

void CaptureProblemCheck::Read(const TraceAnalysis& analysis, const BoundOptions& options,
                               std::vector<Finding>* findings) const {
  const trace::Trace& trace = analysis.trace();
  const CaptureAnalysis& captures = analysis.captures();
  std::vector<bool> window_seen(captures.windows().size(), false);
  for (const CaptureProblem& problem : captures.problems()) {
    // The first problem of a window is its root cause: the Python exceptions that left that capture are its evidence.
    const bool first_in_window = problem.window && !window_seen[*problem.window];
    if (problem.window) window_seen[*problem.window] = true;
    // DDP captured too early or built on the default stream: its check names the cause at the program's line.
    if (problem.cause != cause_ || analysis::DdpNamesTheCause(analysis, problem)) continue;
    Finding finding = NewFinding();
    finding.where = analysis.Locate(problem.call);
    // A call CUDA refused broke the capture; one it allowed is a latent defect (it escapes the graph or fails under
    // a stricter capture mode).
    finding.severity = problem.failed ? Severity::kError : Severity::kWarning;
    const int32_t return_code = trace.Detail(trace.api_calls[problem.call]).return_code;
    finding.evidence.push_back(absl::StrCat(DescribeCall(trace, problem.call), " returned ",
                                            return_code == 0 ? "success" : DescribeReturnCode(return_code)));
    if (problem.window) {
      const CaptureWindow& window = captures.windows()[*problem.window];
      finding.evidence.push_back(absl::StrCat("during ", DescribeCapture(trace, window)));
      if (problem.other_thread) {
        finding.evidence.push_back(absl::StrCat("called from thread ", trace.api_calls[problem.call].thread_id,
                                                ", not the capturing thread ", window.thread_id,
                                                "; a global-mode capture forbids unsafe calls from "
                                                "every thread"));
      }
    }
    if (problem.occurrences > 1) {
      finding.evidence.push_back(absl::StrCat("seen ", problem.occurrences, " times at this call site in ",
                                              Plural(problem.captures, "capture", "captures")));
    }
    for (const Consequence& c : problem.consequences) {
      finding.consequences.push_back(DescribeConsequence(trace, c));
    }
    Describe(analysis, problem, &finding);
    if (first_in_window) {
      for (std::string& line : ExceptionEvidence(analysis, *problem.window))
        finding.evidence.push_back(std::move(line));
    }
    AddLibraryAdvice(&finding);
    findings->push_back(std::move(finding));
  }
  ReportPythonExceptions(analysis, NewFinding(), findings);
}

}  // namespace graphcheck::checks
