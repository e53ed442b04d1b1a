// YAML -> ConfigDocument through yaml-cpp, whose node marks give each key's line and column. Stricter than yaml-cpp
// where a configuration must be: a quoted scalar must be closed (yaml-cpp ends one at the end of the file), a key may
// appear once per mapping (yaml-cpp keeps both, and the last would silently win), and flow nesting is bounded before
// parsing (yaml-cpp's recursive parser reports deep nesting as "bad file", or runs out of stack).
#include <set>
#include <string>

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include "absl/strings/str_cat.h"
#include "checks/config/config_readers.h"

namespace graphcheck::checks {
namespace config_internal {
namespace {

// Line and column (1-based) of byte `pos` of `text`.
Position PositionAt(absl::string_view text, size_t pos) {
  Position position{1, 1};
  for (size_t i = 0; i < pos && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++position.line;
      position.column = 1;
    } else {
      ++position.column;
    }
  }
  return position;
}

// Where the flow collections ([...], {...}) nest deeper than kMaxDepth, or npos. Quoted scalars and comments are
// skipped, as the parser would.
size_t TooDeepFlow(absl::string_view text) {
  int depth = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"' || c == '\'') {
      for (++i; i < text.size() && text[i] != c; ++i) {
        if (c == '"' && text[i] == '\\') ++i;
      }
    } else if (c == '#' && (i == 0 || text[i - 1] == ' ' || text[i - 1] == '\n' || text[i - 1] == '\t')) {
      while (i < text.size() && text[i] != '\n') ++i;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxDepth) return i;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return absl::string_view::npos;
}

// Whether the quoted scalar that starts at byte `pos` ('"' or '\'') has its closing quote.
bool QuoteClosed(absl::string_view text, size_t pos) {
  const char quote = text[pos];
  for (size_t i = pos + 1; i < text.size(); ++i) {
    if (quote == '"' && text[i] == '\\') {
      ++i;
    } else if (text[i] == quote) {
      if (quote == '\'' && i + 1 < text.size() && text[i + 1] == '\'') {
        ++i;  // '' is an escaped quote
      } else {
        return true;
      }
    }
  }
  return false;
}

Position PositionOf(const YAML::Node& node) {
  const YAML::Mark mark = node.Mark();
  if (mark.is_null()) return Position{};
  return Position{mark.line + 1, mark.column + 1};
}

ConfigScalar ScalarOf(const YAML::Node& node) {
  return ConfigScalar{node.IsNull() ? "null" : node.Scalar(), PositionOf(node)};
}

class YamlFlattener {
 public:
  YamlFlattener(absl::string_view text, ConfigDocument* document) : text_(text), document_(document) {}

  absl::Status Visit(const YAML::Node& node, const std::string& key, Position key_position, int depth) {
    if (depth > kMaxDepth) return ErrorAt(*document_, PositionOf(node), "nesting is too deep");
    if (++visited_ > kMaxEntries) return ErrorAt(*document_, PositionOf(node), "document is too large");
    if (absl::Status closed = CheckQuote(node); !closed.ok()) return closed;
    ConfigEntry entry;
    entry.key = key;
    entry.position = key_position;
    switch (node.Type()) {
      case YAML::NodeType::Undefined:
      case YAML::NodeType::Null:
        entry.kind = ConfigEntry::Kind::kNull;
        document_->Add(std::move(entry));
        return absl::OkStatus();
      case YAML::NodeType::Scalar:
        entry.kind = ConfigEntry::Kind::kScalar;
        entry.values.push_back(ScalarOf(node));
        document_->Add(std::move(entry));
        return absl::OkStatus();
      case YAML::NodeType::Sequence:
        return VisitSequence(node, std::move(entry), depth);
      case YAML::NodeType::Map:
        return VisitMap(node, key, depth);
    }
    return absl::OkStatus();
  }

 private:
  // A list of scalars is one entry (a scope list); a list holding maps or lists is walked with indexes as keys.
  absl::Status VisitSequence(const YAML::Node& node, ConfigEntry entry, int depth) {
    bool all_scalars = true;
    for (const YAML::Node& item : node) all_scalars = all_scalars && (item.IsScalar() || item.IsNull());
    if (all_scalars) {
      entry.kind = ConfigEntry::Kind::kList;
      for (const YAML::Node& item : node) entry.values.push_back(ScalarOf(item));
      document_->Add(std::move(entry));
      return absl::OkStatus();
    }
    int index = 0;
    for (const YAML::Node& item : node) {
      absl::Status status = Visit(item, JoinKey(entry.key, absl::StrCat(index++)), PositionOf(item), depth + 1);
      if (!status.ok()) return status;
    }
    return absl::OkStatus();
  }

  absl::Status VisitMap(const YAML::Node& node, const std::string& key, int depth) {
    std::set<std::string> seen;
    for (auto it = node.begin(); it != node.end(); ++it) {
      if (!it->first.IsScalar()) return ErrorAt(*document_, PositionOf(it->first), "a key must be a plain scalar");
      if (absl::Status closed = CheckQuote(it->first); !closed.ok()) return closed;
      if (!seen.insert(it->first.Scalar()).second) {
        return ErrorAt(*document_, PositionOf(it->first),
                       absl::StrCat("duplicate key '", it->first.Scalar(), "' (a key may appear once per mapping)"));
      }
      absl::Status status = Visit(it->second, JoinKey(key, it->first.Scalar()), PositionOf(it->first), depth + 1);
      if (!status.ok()) return status;
    }
    return absl::OkStatus();
  }

  // yaml-cpp ends an unclosed quoted scalar at the end of the file instead of failing.
  absl::Status CheckQuote(const YAML::Node& node) const {
    if (!node.IsScalar() || node.Tag() != "!") return absl::OkStatus();  // "!": a quoted scalar
    const YAML::Mark mark = node.Mark();
    if (mark.is_null() || mark.pos < 0 || static_cast<size_t>(mark.pos) >= text_.size()) return absl::OkStatus();
    const size_t pos = static_cast<size_t>(mark.pos);
    if ((text_[pos] == '"' || text_[pos] == '\'') && !QuoteClosed(text_, pos)) {
      return ErrorAt(*document_, PositionOf(node), "quoted scalar is never closed");
    }
    return absl::OkStatus();
  }

  absl::string_view text_;
  ConfigDocument* document_;
  size_t visited_ = 0;
};

}  // namespace

absl::Status ReadYaml(absl::string_view text, ConfigDocument* document) {
  if (const size_t deep = TooDeepFlow(text); deep != absl::string_view::npos) {
    return ErrorAt(*document, PositionAt(text, deep),
                   absl::StrCat("nesting is too deep (more than ", kMaxDepth, " levels of [ ] or { })"));
  }
  try {
    const YAML::Node root = YAML::Load(std::string(text));
    if (root.IsNull() || !root.IsDefined()) return absl::OkStatus();  // an empty file sets nothing
    if (!root.IsMap()) return ErrorAt(*document, PositionOf(root), "the top level must be a mapping of keys");
    return YamlFlattener(text, document).Visit(root, "", Position{}, 0);
  } catch (const YAML::DeepRecursion& e) {  // yaml-cpp's own message for it is "bad file"
    return ErrorAt(*document, Position{e.mark.line + 1, e.mark.column + 1},
                   absl::StrCat("nesting is too deep (more than ", e.depth() - 1, " levels)"));
  } catch (const YAML::Exception& e) {
    return ErrorAt(*document, e.mark.is_null() ? Position{} : Position{e.mark.line + 1, e.mark.column + 1}, e.msg);
  }
}

}  // namespace config_internal
}  // namespace graphcheck::checks
