// YAML -> ConfigDocument through yaml-cpp, whose node marks give each key's line and column.
#include <string>

#include <yaml-cpp/yaml.h>

#include "absl/strings/str_cat.h"
#include "validators/config/config_readers.h"

namespace graphcheck {
namespace config_internal {
namespace {

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
  explicit YamlFlattener(ConfigDocument* document) : document_(document) {}

  absl::Status Visit(const YAML::Node& node, const std::string& key, Position key_position, int depth) {
    if (depth > kMaxDepth) return ErrorAt(*document_, PositionOf(node), "nesting is too deep");
    if (++visited_ > kMaxEntries) return ErrorAt(*document_, PositionOf(node), "document is too large");
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
    for (auto it = node.begin(); it != node.end(); ++it) {
      if (!it->first.IsScalar()) return ErrorAt(*document_, PositionOf(it->first), "a key must be a plain scalar");
      absl::Status status = Visit(it->second, JoinKey(key, it->first.Scalar()), PositionOf(it->first), depth + 1);
      if (!status.ok()) return status;
    }
    return absl::OkStatus();
  }

  ConfigDocument* document_;
  size_t visited_ = 0;
};

}  // namespace

absl::Status ReadYaml(absl::string_view text, ConfigDocument* document) {
  try {
    const YAML::Node root = YAML::Load(std::string(text));
    if (root.IsNull() || !root.IsDefined()) return absl::OkStatus();  // an empty file sets nothing
    if (!root.IsMap()) return ErrorAt(*document, PositionOf(root), "the top level must be a mapping of keys");
    return YamlFlattener(document).Visit(root, "", Position{}, 0);
  } catch (const YAML::Exception& e) {
    return ErrorAt(*document, e.mark.is_null() ? Position{} : Position{e.mark.line + 1, e.mark.column + 1}, e.msg);
  }
}

}  // namespace config_internal
}  // namespace graphcheck
