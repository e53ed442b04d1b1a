// The HTML report: one self-contained file (inline CSS and SVG, no script, nothing fetched) for people who would
// rather look than read: the verdict, the plots (report/svg_plots.h), the findings grouped by check with where they
// happened (the user's line first, the backtrace folded) and the fix, the pipeline steps, numerics and metrics. The
// document is built with pugixml, so every string from the program is escaped by its serializer.
#ifndef GRAPHCHECK_REPORT_HTML_H_
#define GRAPHCHECK_REPORT_HTML_H_

#include <string>

#include <pugixml.hpp>

#include "core/report.h"

namespace graphcheck {

std::string RenderHtml(const Report& report);

// An HTML document in `doc` with its head (charset, `title`, the style sheet `style`, which must hold no '<', '>' or
// '&'): returns its body. Shared with graphcheck plan's HTML (report/capture_plan.h).
pugi::xml_node StartHtml(pugi::xml_document* doc, const std::string& title, const char* style);
// The document as text, with no empty-element tags: an HTML parser reads <div/> as an open <div>.
std::string HtmlText(const pugi::xml_document& doc);

}  // namespace graphcheck

#endif  // GRAPHCHECK_REPORT_HTML_H_
