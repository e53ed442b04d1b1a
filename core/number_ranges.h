// Numbers written as runs of consecutive values ("0-3,5"), for messages that name ranks or steps.
#ifndef GRAPHCHECK_CORE_NUMBER_RANGES_H_
#define GRAPHCHECK_CORE_NUMBER_RANGES_H_

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"

namespace graphcheck {

// `numbers` sorted, each run of consecutive values as "first-last", the runs joined by `separator`.
template <typename Int>
std::string NumberRanges(std::vector<Int> numbers, absl::string_view separator) {
  std::sort(numbers.begin(), numbers.end());
  std::vector<std::string> runs;
  for (size_t i = 0; i < numbers.size();) {
    size_t j = i;
    while (j + 1 < numbers.size() && numbers[j + 1] == numbers[j] + 1) ++j;
    runs.push_back(j == i ? absl::StrCat(numbers[i]) : absl::StrCat(numbers[i], "-", numbers[j]));
    i = j + 1;
  }
  return absl::StrJoin(runs, separator);
}

}  // namespace graphcheck

#endif  // GRAPHCHECK_CORE_NUMBER_RANGES_H_
