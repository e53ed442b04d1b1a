// SARIF 2.1.0 rendering, for code-scanning systems (GitHub code scanning, GitLab): one run with graphcheck as the
// tool, a rule per check (title, summary, help text and the check's doc page, default level), a result per finding
// with its level, partial fingerprint (core/fingerprint.h) and, where the finding has a file and line (a
// configuration key, the user's Python frame), a physical location; the run's command line as its invocation.
#ifndef GRAPHCHECK_REPORT_SARIF_H_
#define GRAPHCHECK_REPORT_SARIF_H_

#include <string>

#include "core/registry.h"
#include "core/report.h"

namespace graphcheck {

// Where a check's page (docs/checks/ID.md) is published: GRAPHCHECK_DOCS_URL, set at build time, followed by "ID.md";
// empty when the build names no such site.
std::string CheckDocUri(const std::string& check_id);

// `checks` gives each rule its metadata; a rule for a finding whose check it does not hold (an older report) gets what
// the finding says. May be null.
std::string RenderSarif(const Report& report, const CheckRegistry* checks);

}  // namespace graphcheck

#endif  // GRAPHCHECK_REPORT_SARIF_H_
