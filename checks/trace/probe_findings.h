// What the Python probe's events add to a trace's findings, once the trace is analyzed: the findings of the
// exceptions the known-message table maps to a check, the evidence of those a CUDA root cause explains, and whether a
// graph was replayed after a change. Above trace_analysis.h (python_probe.h, below it, indexes the events).
#ifndef GRAPHCHECK_CHECKS_TRACE_PROBE_FINDINGS_H_
#define GRAPHCHECK_CHECKS_TRACE_PROBE_FINDINGS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/trace_analysis.h"
#include "core/check.h"
#include "core/finding.h"

namespace graphcheck::checks {

// The findings of the Python exceptions (ProbeIndex) that the known-message table maps to `prototype.check_id` and
// that are reported on their own: where the exception was raised (its traceback's frames, the user's first), what it
// says, the capture it left and who began it, and the table's meaning and fix. `prototype` is the check's NewFinding().
void ReportPythonExceptions(const analysis::TraceAnalysis& analysis, const Finding& prototype,
                            std::vector<Finding>* findings);

// Evidence lines for the exceptions that left capture window `window` but are not reported on their own (the window's
// CUDA calls show the root cause).
std::vector<std::string> ExceptionEvidence(const analysis::TraceAnalysis& analysis, size_t window);

// Whether the CUDA graph that the capture of Python graph `graph` (a probe event's graph id) made was launched after
// `time_ns`: a change to what the graph baked in matters only if it is replayed afterwards.
bool ReplayedAfter(const analysis::TraceAnalysis& analysis, uint64_t graph, uint64_t time_ns);

// A check whose findings are only the Python exceptions that the known-message table maps to its id
// (ReportPythonExceptions): it declares its CheckInfo, nothing else.
class PythonExceptionCheck : public CheckOf<analysis::TraceAnalysis> {
 public:
  using CheckOf::CheckOf;

 protected:
  void Read(const analysis::TraceAnalysis& analysis, const BoundOptions& options,
            std::vector<Finding>* findings) const final {
    ReportPythonExceptions(analysis, NewFinding(), findings);
  }
};

}  // namespace graphcheck::checks

#endif  // GRAPHCHECK_CHECKS_TRACE_PROBE_FINDINGS_H_
