#include "report/number_text.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace graphcheck {
namespace {

// Fixed notation writes every integer digit: past this, 13 digits or more, the exponent form is shorter and as exact
// as a report needs.
constexpr double kLargestFixed = 1e12;

}  // namespace

std::string NumberText(double value, int precision, absl::string_view unit, Notation notation) {
  if (!std::isfinite(value)) return "n/a";
  const std::string number = notation == Notation::kFixed && std::fabs(value) < kLargestFixed
                                 ? absl::StrFormat("%.*f", precision, value)
                                 : absl::StrFormat("%.*g", notation == Notation::kFixed ? 3 : precision, value);
  if (unit.empty()) return number;
  return absl::StrCat(number, unit == "%" ? "" : " ", unit);
}

}  // namespace graphcheck
