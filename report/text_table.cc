#include "report/text_table.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/utf8.h"

namespace graphcheck {

std::string AlignedTable(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> widths(header.size(), 0);
  auto widen = [&](const std::vector<std::string>& cells) {
    for (size_t i = 0; i < cells.size() && i < widths.size(); ++i) {
      widths[i] = std::max(widths[i], LineText(cells[i]).size());
    }
  };
  widen(header);
  for (const std::vector<std::string>& row : rows) widen(row);
  std::string out;
  auto line = [&](const std::vector<std::string>& cells) {
    std::string text = " ";
    for (size_t i = 0; i < cells.size() && i < widths.size(); ++i) {
      absl::StrAppendFormat(&text, " %-*s", widths[i], LineText(cells[i]));
    }
    absl::StrAppend(&out, absl::StripTrailingAsciiWhitespace(text), "\n");
  };
  line(header);
  for (const std::vector<std::string>& row : rows) line(row);
  return out;
}

}  // namespace graphcheck
