// Shared shape of the capture checks: each reports the capture-window analysis' problems of one cause (one finding
// per root cause and call site, with its consequences) and supplies the wording; this class fills where, severity,
// the common evidence and the consequences.
#ifndef GRAPHCHECK_CHECKS_TRACE_INTERNAL_CAPTURE_PROBLEM_CHECK_H_
#define GRAPHCHECK_CHECKS_TRACE_INTERNAL_CAPTURE_PROBLEM_CHECK_H_

#include <vector>

#include "analysis/capture_windows.h"
#include "analysis/torch_ops.h"
#include "analysis/trace_analysis.h"

namespace graphcheck::checks {

class CaptureProblemCheck : public CheckOf<analysis::TraceAnalysis> {
 public:
  CaptureProblemCheck(CheckInfo info, analysis::CaptureCause cause) : CheckOf(std::move(info)), cause_(cause) {}

 protected:
  void Read(const analysis::TraceAnalysis& analysis, const BoundOptions& options,
            std::vector<Finding>* findings) const override;
  // Sets message and fix, and may add evidence. `finding` already has where, severity and the common evidence.
  virtual void Describe(const analysis::TraceAnalysis& analysis, const analysis::CaptureProblem& problem,
                        Finding* finding) const = 0;

 private:
  analysis::CaptureCause cause_;
};

}  // namespace graphcheck::checks

#endif  // GRAPHCHECK_CHECKS_TRACE_INTERNAL_CAPTURE_PROBLEM_CHECK_H_
