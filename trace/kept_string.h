// How much of one string from a trace the reader keeps: the string table's (kernel and function names, NVTX text,
// backtrace and Python frames, the probe's text) and the strings a record holds itself (the host, the command line,
// the environment, a GPU's name, the recorder's message) alike.
#ifndef GRAPHCHECK_TRACE_KEPT_STRING_H_
#define GRAPHCHECK_TRACE_KEPT_STRING_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace graphcheck::trace {

// The most bytes of one string the reader keeps. A longer one keeps its first bytes (whole UTF-8 characters) and ends
// in a marker, " ... [cut by graphcheck: N bytes]": the analysis copies names into steps, timelines and findings, so
// a name of 40 MB (a code generator's) would otherwise cost its size many times over, where the architecture promises
// memory under twice the trace's size.
inline constexpr size_t kMaxStringBytes = 64 * 1024;

// `value`, or its first kMaxStringBytes bytes (not splitting a UTF-8 character) and the marker naming its length.
inline std::string KeptString(absl::string_view value) {
  if (value.size() <= kMaxStringBytes) return std::string(value);
  size_t cut = kMaxStringBytes;
  while (cut > 0 && (static_cast<uint8_t>(value[cut]) & 0xC0) == 0x80) --cut;  // a continuation byte
  return absl::StrCat(value.substr(0, cut), " ... [cut by graphcheck: ", value.size(), " bytes]");
}

}  // namespace graphcheck::trace

#endif  // GRAPHCHECK_TRACE_KEPT_STRING_H_
