// Program-supplied text (kernel names, NVTX ranges, stderr lines, exception messages, paths, bytes of a binary
// config echoed in an error) may hold invalid UTF-8 and control characters. Every renderer makes it safe for its
// format through these: the terminal never receives an escape sequence or a broken byte, and XML never a character
// XML 1.0 forbids.
#ifndef GRAPHCHECK_CORE_UTF8_H_
#define GRAPHCHECK_CORE_UTF8_H_

#include <string>

#include "absl/strings/string_view.h"

namespace graphcheck {

// `s` with every invalid UTF-8 sequence (stray continuation bytes, overlong forms, surrogates, code points past
// U+10FFFF, sequences cut short) replaced by U+FFFD.
std::string ToValidUtf8(absl::string_view s);

// For a terminal, one line of a line-structured output (the text report, a table cell, a one-line error): invalid
// UTF-8 bytes, C0 controls other than tab, DEL and the C1 controls (U+0080-U+009F, which some terminals obey) written
// as \xNN, newlines as \n, so that program text can never start a line of its own (a forged "error [check] ..."
// finding), and Unicode's bidirectional formatting characters (U+202E and its kin, which make text display in
// another order than it reads) and line separators (U+2028, U+2029) as \uNNNN; everything else kept.
std::string LineText(absl::string_view s);

// For XML 1.0 text and attributes (before the XML library escapes <, &, "), and for HTML and Markdown: valid UTF-8,
// the characters XML 1.0 cannot carry even escaped (C0 controls other than tab and newline; U+FFFE and U+FFFF)
// written as \xNN or \uFFFE, and what a reader of the page would not see (carriage return, which a parser reads as a
// newline; DEL, the C1 controls, the bidirectional formatting characters, U+2028 and U+2029) as \xNN or \uNNNN.
std::string XmlSafeText(absl::string_view s);

}  // namespace graphcheck

#endif  // GRAPHCHECK_CORE_UTF8_H_
