#include "report/text_safety.h"

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"

namespace graphcheck {

std::string ValidUtf8(absl::string_view s) {
  // nlohmann's serializer already knows UTF-8 and replaces what is invalid; a string round trip through it is the
  // repaired string.
  const std::string quoted =
      nlohmann::json(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return nlohmann::json::parse(quoted).get<std::string>();
}

namespace {

// Control characters other than those `kept` holds shown as \xNN.
std::string ShowControls(absl::string_view s, absl::string_view kept) {
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    if ((c < 0x20 || c == 0x7f) && kept.find(static_cast<char>(c)) == absl::string_view::npos) {
      absl::StrAppend(&out, "\\x", absl::Hex(c, absl::kZeroPad2));
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  return out;
}

}  // namespace

std::string TerminalSafe(absl::string_view s) { return ShowControls(s, "\n\t"); }

std::string XmlSafe(absl::string_view s) { return ShowControls(ValidUtf8(s), "\n\t\r"); }

}  // namespace graphcheck
