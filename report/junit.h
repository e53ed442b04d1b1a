// JUnit XML rendering, for CI dashboards: one testsuite per report, one testcase per check that ran; a check with
// findings at or above the fail threshold is a failure, below it the findings go to system-out.
#ifndef GRAPHCHECK_REPORT_JUNIT_H_
#define GRAPHCHECK_REPORT_JUNIT_H_

#include <string>

#include "core/report.h"
#include "report/policy.h"

namespace graphcheck {

std::string RenderJunit(const Report& report, FailOn fail_on);

}  // namespace graphcheck

#endif  // GRAPHCHECK_REPORT_JUNIT_H_
