// How much of a report each rendered format shows. However many findings a run makes, every rendered format stays
// readable, bounded in size and uploadable (GitHub code scanning: 25,000 results and 10 MB per SARIF file, of which
// it shows 5,000); what is left out is counted in an "and N more" line. JSON, the saved form, keeps every finding.
#ifndef GRAPHCHECK_REPORT_LIMITS_H_
#define GRAPHCHECK_REPORT_LIMITS_H_

#include <cstddef>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/plural.h"

namespace graphcheck {

inline constexpr size_t kMaxFindingsShown = 1000;       // text and HTML: findings shown in full
inline constexpr size_t kMaxFindingsPerTestcase = 100;  // JUnit: findings described in one check's testcase
inline constexpr size_t kMaxSarifResults = 5000;        // the most code scanning displays per run
inline constexpr size_t kMaxSarifBytes = 9u << 20;      // the file, under upload-sarif's 10 MB

// "... and 12 more findings (--format json lists all)".
inline std::string MoreFindingsLine(size_t omitted) {
  return absl::StrCat("... and ", Plural(omitted, "more finding", "more findings"), " (--format json lists all)");
}

}  // namespace graphcheck

#endif  // GRAPHCHECK_REPORT_LIMITS_H_
