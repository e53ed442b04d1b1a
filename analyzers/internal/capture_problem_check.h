// Shared shape of the capture checks: each reports the capture-window analysis' problems of one cause (one finding
// per root cause and call site, with its consequences) and supplies the wording; this class fills where, severity,
// the common evidence and the consequences.
#ifndef GRAPHCHECK_ANALYZERS_INTERNAL_CAPTURE_PROBLEM_CHECK_H_
#define GRAPHCHECK_ANALYZERS_INTERNAL_CAPTURE_PROBLEM_CHECK_H_

#include <vector>

#include "analyzers/capture_windows.h"
#include "analyzers/trace_analysis.h"

namespace graphcheck::analyzers {

class CaptureProblemCheck : public CheckOf<TraceAnalysis> {
 public:
  CaptureProblemCheck(CheckInfo info, CaptureCause cause) : CheckOf(std::move(info)), cause_(cause) {}

 protected:
  void Read(const TraceAnalysis& analysis, const BoundOptions& options, std::vector<Finding>* findings) const override;
  // Sets message and fix, and may add evidence. `finding` already has where, severity and the common evidence.
  virtual void Describe(const TraceAnalysis& analysis, const CaptureProblem& problem, Finding* finding) const = 0;

 private:
  CaptureCause cause_;
};

// " (aten::_local_scalar_dense: Tensor.item(), ...)" for a finding whose backtrace shows an operator; "" otherwise.
std::string OperatorClause(const Location& where);

}  // namespace graphcheck::analyzers

#endif  // GRAPHCHECK_ANALYZERS_INTERNAL_CAPTURE_PROBLEM_CHECK_H_
