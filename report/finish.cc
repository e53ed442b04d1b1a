#include "report/finish.h"

#include <fnmatch.h>

#include <algorithm>

#include "core/registry.h"
#include "report/verdict.h"

namespace graphcheck {

void ApplySeverityOverrides(const std::vector<SeverityOverride>& overrides, std::vector<Finding>* findings) {
  if (overrides.empty()) return;
  for (Finding& finding : *findings) {
    for (const SeverityOverride& o : overrides) {
      if (fnmatch(o.glob.c_str(), finding.check_id.c_str(), 0) == 0) finding.severity = o.severity;
    }
  }
}

void FinishReport(const std::vector<SeverityOverride>& severities, Report* report) {
  ApplySeverityOverrides(severities, &report->findings);
  SortFindings(&report->findings);
  std::sort(report->checks_run.begin(), report->checks_run.end());
  report->verdict = ComputeVerdict(*report);
}

}  // namespace graphcheck
