// Markdown summary sized for a merge-request comment (GitHub, GitLab): the verdict, a table of errors and warnings
// (capped, with a count of the rest), the key metrics and the steps. Program strings are escaped so that they render
// as text: no markup, HTML, table breaks or links can come from a kernel name or an exception text.
#ifndef GRAPHCHECK_REPORT_MARKDOWN_H_
#define GRAPHCHECK_REPORT_MARKDOWN_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "core/report.h"

namespace graphcheck {

std::string RenderMarkdown(const Report& report);

// One line of text safe inside a paragraph or a table cell: valid UTF-8, line breaks as spaces, Markdown and HTML
// syntax escaped, @mentions made inert, and at most `max_chars` bytes (cut on a character boundary, "..." added).
std::string MarkdownText(absl::string_view text, size_t max_chars = 300);
// A table of escaped cells: the header cut at 80 characters, the cells at 120.
std::string MarkdownTable(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows);

}  // namespace graphcheck

#endif  // GRAPHCHECK_REPORT_MARKDOWN_H_
