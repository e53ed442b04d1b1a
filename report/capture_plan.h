// `graphcheck plan`'s output formats: text, JSON, Markdown and HTML, from one CapturePlan (core/capture_plan.h). The
// JSON holds every figure; the others the regions' verdicts and their bucket sets, with the sizes seen.
#ifndef GRAPHCHECK_REPORT_CAPTURE_PLAN_H_
#define GRAPHCHECK_REPORT_CAPTURE_PLAN_H_

#include <string>

#include "core/capture_plan.h"
#include "report/output.h"

namespace graphcheck {

// kJunit and kSarif are not plan formats: the command refuses them before planning.
std::string RenderCapturePlan(const CapturePlan& plan, ReportFormat format);

}  // namespace graphcheck

#endif  // GRAPHCHECK_REPORT_CAPTURE_PLAN_H_
