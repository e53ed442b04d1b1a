// Tables as text cells (CellTable), and plain-text tables for the text report: columns padded to their widest cell, two
// spaces of indent, control characters and newlines escaped (LineText), trailing blanks cut.
#ifndef GRAPHCHECK_REPORT_TEXT_TABLE_H_
#define GRAPHCHECK_REPORT_TEXT_TABLE_H_

#include <cstddef>
#include <string>
#include <vector>

namespace graphcheck {

// A table as text cells, before a renderer lays it out (the numerics and coverage tables of a report).
struct CellTable {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;  // at most the rows asked for
  size_t omitted = 0;                          // rows left out
};

std::string AlignedTable(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows);

}  // namespace graphcheck

#endif  // GRAPHCHECK_REPORT_TEXT_TABLE_H_
