// Making program-supplied strings (kernel names, NVTX ranges, paths, exception texts) safe to embed: valid UTF-8, and
// for XML no character XML 1.0 cannot carry. Escaping of markup itself is left to the serializers (pugixml, nlohmann).
#ifndef GRAPHCHECK_REPORT_TEXT_SAFETY_H_
#define GRAPHCHECK_REPORT_TEXT_SAFETY_H_

#include <string>

#include "absl/strings/string_view.h"

namespace graphcheck {

// Invalid UTF-8 sequences replaced with U+FFFD.
std::string ValidUtf8(absl::string_view s);

// For terminals: control characters (escape sequences that could drive the terminal) shown as \xNN; tab and newline
// kept.
std::string TerminalSafe(absl::string_view s);

// ValidUtf8, and control characters other than tab, newline and carriage return shown as \xNN (XML 1.0 forbids
// them even as character references).
std::string XmlSafe(absl::string_view s);

}  // namespace graphcheck

#endif  // GRAPHCHECK_REPORT_TEXT_SAFETY_H_
