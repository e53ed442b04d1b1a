// The HTML report: one self-contained file (inline CSS and SVG, no script, nothing fetched) for people who would
// rather look than read: the verdict, the plots (report/svg_plots.h), the findings grouped by check with where they
// happened (the user's line first, the backtrace folded) and the fix, the pipeline steps, numerics and metrics. The
// document is built with pugixml, so every string from the program is escaped by its serializer.
#ifndef GRAPHCHECK_REPORT_HTML_H_
#define GRAPHCHECK_REPORT_HTML_H_

#include <string>

#include "core/report.h"

namespace graphcheck {

std::string RenderHtml(const Report& report);

}  // namespace graphcheck

#endif  // GRAPHCHECK_REPORT_HTML_H_
