// The numerics table of a `graphcheck check` report: every tensor the engine compared between the eager and the
// graphed run, worst first (new NaN or Inf, then the largest difference relative to the tensor's scale), as rows of
// text cells that the text, Markdown and HTML renderers each lay out their own way.
#ifndef GRAPHCHECK_REPORT_NUMERICS_TABLE_H_
#define GRAPHCHECK_REPORT_NUMERICS_TABLE_H_

#include <cstddef>
#include <string>
#include <vector>

#include "core/numerics_sample.h"
#include "report/text_table.h"

namespace graphcheck {

CellTable MakeNumericsTable(const std::vector<NumericsSample>& samples, size_t max_rows);

}  // namespace graphcheck

#endif  // GRAPHCHECK_REPORT_NUMERICS_TABLE_H_
