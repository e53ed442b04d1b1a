// The graph-coverage section of a report (core/report.h's Coverage) as text that the text, Markdown and HTML renderers
// each lay out their own way: a headline (the graphed share of GPU time and of kernels, by who made the graphs, and
// over which steps), a table of the steps and a table of the largest eager remainders with why they are not graphed.
// Unescaped: each renderer escapes for its own format.
#ifndef GRAPHCHECK_REPORT_COVERAGE_TABLE_H_
#define GRAPHCHECK_REPORT_COVERAGE_TABLE_H_

#include <cstddef>
#include <string>
#include <vector>

#include "core/report.h"
#include "report/text_table.h"

namespace graphcheck {

// "62.5% of the GPU time and 70.0% of the kernels ran as graph replays (make_graphed_callables 50.0%, user 12.5% of
// the GPU time)", then the scope line (which steps were counted, which were left out); one line when nothing was
// counted.
std::vector<std::string> CoverageHeadline(const Coverage& coverage);

// step | eager kernels | eager GPU | graphed kernels | graphed GPU | graphed GPU share | by origin.
CellTable MakeCoverageStepTable(const Coverage& coverage, size_t max_rows);

// kernel | GPU time | share of eager | launches | steps | where | reason | why.
CellTable MakeRemainderTable(const Coverage& coverage);

// The coverage section as plain text lines (no colour), as `graphcheck analyze` prints it and the golden tests read it.
std::string CoverageText(const Coverage& coverage, size_t max_step_rows);

}  // namespace graphcheck

#endif  // GRAPHCHECK_REPORT_COVERAGE_TABLE_H_
