// Numbers as every human-readable output prints them: text, Markdown, HTML (its SVG plots' labels too), the verdict,
// diff, --baseline and the capture plan. A report's numbers are a program's measurements or a shared file's, and a
// damaged or hostile file holds anything (1e308, NaN): each is printed short, never as a 309-digit number, "nan" or
// "inf". JSON and SARIF carry the numbers themselves.
#ifndef GRAPHCHECK_REPORT_NUMBER_TEXT_H_
#define GRAPHCHECK_REPORT_NUMBER_TEXT_H_

#include <string>

#include "absl/strings/string_view.h"

namespace graphcheck {

enum class Notation {
  kFixed,        // `precision` decimals ("%.*f"); from 1e12 on, 3 significant digits ("1e+308")
  kSignificant,  // `precision` significant digits ("%.*g")
};

// `value`, then ` unit` when one is given ("12.5 us"; "%" follows without a space: "42.0%"); "n/a" alone, without
// the unit, for NaN or an infinity.
std::string NumberText(double value, int precision, absl::string_view unit = "", Notation notation = Notation::kFixed);

}  // namespace graphcheck

#endif  // GRAPHCHECK_REPORT_NUMBER_TEXT_H_
