// SARIF 2.1.0 rendering, for code-scanning systems (GitHub code scanning, GitLab): one run with graphcheck as the
// tool, a rule per check (title, summary, help text and the check's doc page, default level), a result per finding
// with its level, occurrence count, partial fingerprint (core/fingerprint.h) and a physical location (the finding's
// configuration key or the user's Python line; else the file the run was about), relative to %SRCROOT% when under
// the source root; the run's command line as its invocation, which says when the run did not complete. At most
// kMaxSarifResults results in a file of at most kMaxSarifBytes (report/limits.h); a notification counts the rest.
#ifndef GRAPHCHECK_REPORT_SARIF_H_
#define GRAPHCHECK_REPORT_SARIF_H_

#include <string>

#include "core/registry.h"
#include "core/report.h"

namespace graphcheck {

// Where a check's page (docs/checks/ID.md) is published: GRAPHCHECK_DOCS_URL, set at build time, followed by "ID.md";
// empty when the build names no such site.
std::string CheckDocUri(const std::string& check_id);

// Where relative paths are taken from and which files are the repository's.
struct SarifPaths {
  std::string source_root;       // absolute; files under it get URIs relative to %SRCROOT%; "" = none known
  std::string working_dir;       // absolute; relative paths in findings are taken from here; "" = leave them relative
  std::string default_artifact;  // where a finding without a file points when the report names no subject
};

// `checks` gives each rule its metadata; a rule for a finding whose check it does not hold (an older report) gets what
// the finding says. May be null.
std::string RenderSarif(const Report& report, const CheckRegistry* checks, const SarifPaths& paths = {});

}  // namespace graphcheck

#endif  // GRAPHCHECK_REPORT_SARIF_H_
