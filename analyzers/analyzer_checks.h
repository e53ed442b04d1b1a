// Registration of the trace analyzers.
#ifndef GRAPHCHECK_ANALYZERS_ANALYZER_CHECKS_H_
#define GRAPHCHECK_ANALYZERS_ANALYZER_CHECKS_H_

#include "absl/status/status.h"
#include "core/registry.h"

namespace graphcheck {

absl::Status RegisterAnalyzerChecks(CheckRegistry* registry);

}  // namespace graphcheck

#endif  // GRAPHCHECK_ANALYZERS_ANALYZER_CHECKS_H_
