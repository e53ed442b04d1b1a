// Plain-text tables for the text report: columns padded to their widest cell, two spaces of indent, control
// characters escaped (PrintableText), trailing blanks cut.
#ifndef GRAPHCHECK_REPORT_TEXT_TABLE_H_
#define GRAPHCHECK_REPORT_TEXT_TABLE_H_

#include <string>
#include <vector>

namespace graphcheck {

std::string AlignedTable(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows);

}  // namespace graphcheck

#endif  // GRAPHCHECK_REPORT_TEXT_TABLE_H_
