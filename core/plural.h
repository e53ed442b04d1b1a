// Counts in messages: "1 error", "3 errors". One way to write a count with its noun, for every report and message.
#ifndef GRAPHCHECK_CORE_PLURAL_H_
#define GRAPHCHECK_CORE_PLURAL_H_

#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace graphcheck {

// "1 error", "0 errors", "2 errors": `one` for exactly one, `many` otherwise.
inline std::string Plural(uint64_t n, absl::string_view one, absl::string_view many) {
  return absl::StrCat(n, " ", n == 1 ? one : many);
}

}  // namespace graphcheck

#endif  // GRAPHCHECK_CORE_PLURAL_H_
