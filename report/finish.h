// The one step that finishes every command's report before any format renders it or a baseline is compared with it:
// the configuration file's severity overrides applied, the findings put in report order (most severe first, then by
// check id) and the checks run sorted, once; then the verdict computed from them, once (Report::verdict). The
// analysis finishes what only it knows before this (checks/analyze.h: the processes' findings stamped, merged and
// folded).
#ifndef GRAPHCHECK_REPORT_FINISH_H_
#define GRAPHCHECK_REPORT_FINISH_H_

#include <string>
#include <vector>

#include "core/finding.h"
#include "core/report.h"
#include "core/severity.h"

namespace graphcheck {

// A finding of a check matching `glob` gets `severity` (the last matching override wins).
struct SeverityOverride {
  std::string glob;
  Severity severity = Severity::kWarning;
};

// Rewrites the severity of each finding whose check id matches an override.
void ApplySeverityOverrides(const std::vector<SeverityOverride>& overrides, std::vector<Finding>* findings);

void FinishReport(const std::vector<SeverityOverride>& severities, Report* report);

}  // namespace graphcheck

#endif  // GRAPHCHECK_REPORT_FINISH_H_
