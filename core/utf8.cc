#include "core/utf8.h"

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace graphcheck {
namespace {

// Decodes one UTF-8 sequence at the start of `s`; returns its length, or 0 when the first byte does not start a
// valid sequence (then *code_point is that byte).
size_t DecodeOne(absl::string_view s, uint32_t* code_point) {
  const auto byte = [&](size_t i) { return static_cast<uint8_t>(s[i]); };
  const uint8_t lead = byte(0);
  *code_point = lead;
  if (lead < 0x80) return 1;
  size_t length;
  uint32_t value;
  uint32_t minimum;
  if ((lead & 0xe0) == 0xc0) {
    length = 2, value = lead & 0x1f, minimum = 0x80;
  } else if ((lead & 0xf0) == 0xe0) {
    length = 3, value = lead & 0x0f, minimum = 0x800;
  } else if ((lead & 0xf8) == 0xf0) {
    length = 4, value = lead & 0x07, minimum = 0x10000;
  } else {
    return 0;
  }
  if (s.size() < length) return 0;
  for (size_t i = 1; i < length; ++i) {
    if ((byte(i) & 0xc0) != 0x80) return 0;
    value = value << 6 | (byte(i) & 0x3f);
  }
  if (value < minimum || value > 0x10ffff || (value >= 0xd800 && value <= 0xdfff)) return 0;
  *code_point = value;
  return length;
}

// Walks `s` sequence by sequence: `keep(code_point)` decides whether a valid character is copied as it is; invalid
// bytes and refused characters go to `replace(out, code_point_or_byte, valid)`.
template <typename Keep, typename Replace>
std::string Filter(absl::string_view s, Keep keep, Replace replace) {
  std::string out;
  out.reserve(s.size());
  while (!s.empty()) {
    uint32_t code_point;
    const size_t length = DecodeOne(s, &code_point);
    if (length == 0) {
      replace(&out, code_point, /*valid=*/false);
      s.remove_prefix(1);
      continue;
    }
    if (keep(code_point)) {
      out.append(s.data(), length);
    } else {
      replace(&out, code_point, /*valid=*/true);
    }
    s.remove_prefix(length);
  }
  return out;
}

// Unicode's bidirectional formatting characters (the Arabic letter mark, the directional marks, embeddings,
// overrides and isolates): they reorder the text around them, so a path can display reversed (U+202E).
bool IsBidiControl(uint32_t c) {
  return c == 0x061c || c == 0x200e || c == 0x200f || (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069);
}

// C1 controls (U+0080-U+009F: U+009B is a terminal's CSI, U+0085 a line break) and the line and paragraph separators
// U+2028 and U+2029, which editors and some terminals take for a new line.
bool IsHiddenControl(uint32_t c) { return (c >= 0x80 && c <= 0x9f) || c == 0x2028 || c == 0x2029; }

void AppendEscaped(std::string* out, uint32_t code_point) {
  if (code_point <= 0xff) {
    absl::StrAppendFormat(out, "\\x%02x", code_point);
  } else {
    absl::StrAppendFormat(out, "\\u%04X", code_point);
  }
}

}  // namespace

std::string ToValidUtf8(absl::string_view s) {
  return Filter(
      s, [](uint32_t) { return true; }, [](std::string* out, uint32_t, bool) { out->append("\xEF\xBF\xBD"); });
}

std::string LineText(absl::string_view s) {
  return Filter(
      s, [](uint32_t c) { return c == '\t' || (c >= 0x20 && c != 0x7f && !IsHiddenControl(c) && !IsBidiControl(c)); },
      [](std::string* out, uint32_t c, bool) {
        if (c == '\n') {
          out->append("\\n");
        } else {
          AppendEscaped(out, c);
        }
      });
}

std::string XmlSafeText(absl::string_view s) {
  return Filter(
      s,
      [](uint32_t c) {
        return c == '\n' || c == '\t' ||
               (c >= 0x20 && c != 0x7f && c != 0xfffe && c != 0xffff && !IsHiddenControl(c) && !IsBidiControl(c));
      },
      [](std::string* out, uint32_t c, bool valid) {
        if (valid) {
          AppendEscaped(out, c);
        } else {
          out->append("\xEF\xBF\xBD");
        }
      });
}

}  // namespace graphcheck
