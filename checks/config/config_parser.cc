#include "checks/config/config_parser.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "checks/config/config_readers.h"
#include "core/file_io.h"

namespace graphcheck::checks {
namespace config_internal {

std::string JoinKey(absl::string_view prefix, absl::string_view name) {
  return prefix.empty() ? std::string(name) : absl::StrCat(prefix, ".", name);
}

absl::Status ErrorAt(const ConfigDocument& document, Position position, absl::string_view message) {
  std::string where = document.file();
  if (position.line > 0) absl::StrAppend(&where, ":", position.line, ":", position.column);
  return absl::InvalidArgumentError(absl::StrCat(where, ": ", message));
}

}  // namespace config_internal

namespace {

// Section names under which NeMo-Run executors and launch configurations list the job's environment variables.
bool IsEnvironmentSection(absl::string_view name) {
  return name == "env" || name == "env_vars" || name == "environment" || name == "environment_variables";
}

// Collects `env_vars: {NAME: value}` and `env_vars: ["NAME=value"]` sections, at any depth, into the document's
// environment.
void CollectEnvironmentSections(ConfigDocument* document) {
  std::vector<std::pair<std::string, ConfigScalar>> found;
  for (const ConfigEntry& entry : document->entries()) {
    std::vector<absl::string_view> parts = absl::StrSplit(entry.key, '.');
    const bool in_section = parts.size() >= 2 && IsEnvironmentSection(parts[parts.size() - 2]);
    if (entry.kind == ConfigEntry::Kind::kScalar && in_section) {
      ConfigScalar value = entry.values.front();
      value.position = entry.position;
      found.emplace_back(std::string(parts.back()), std::move(value));
    } else if (entry.kind == ConfigEntry::Kind::kList && IsEnvironmentSection(parts.back())) {
      for (const ConfigScalar& item : entry.values) {
        std::pair<std::string, std::string> kv = absl::StrSplit(item.text, absl::MaxSplits('=', 1));
        if (kv.first.empty() || !absl::StrContains(item.text, '=')) continue;
        found.emplace_back(kv.first, ConfigScalar{kv.second, item.position});
      }
    }
  }
  for (auto& [name, value] : found) {
    document->SetEnvironmentVariable(std::move(name), std::move(value.text), value.position);
  }
}

}  // namespace

ConfigFormat ConfigFormatForPath(absl::string_view path) {
  const std::string lower = absl::AsciiStrToLower(path);
  if (absl::EndsWith(lower, ".yaml") || absl::EndsWith(lower, ".yml")) return ConfigFormat::kYaml;
  if (absl::EndsWith(lower, ".json")) return ConfigFormat::kJson;
  return ConfigFormat::kArgs;
}

absl::StatusOr<ConfigDocument> ParseConfigText(absl::string_view text, std::string file, ConfigFormat format) {
  if (format == ConfigFormat::kArgs) {
    absl::StatusOr<std::vector<config_internal::Word>> words = config_internal::SplitWords(text);
    if (!words.ok()) return absl::InvalidArgumentError(absl::StrCat(file, ":", words.status().message()));
    ConfigDocument document(std::move(file), ConfigDialect::kMcoreArgs);
    config_internal::ReadArgs(*words, &document);
    return document;
  }
  ConfigDocument document(std::move(file), ConfigDialect::kBridge);
  absl::Status status = format == ConfigFormat::kYaml ? config_internal::ReadYaml(text, &document)
                                                      : config_internal::ReadJson(text, &document);
  if (!status.ok()) return status;
  CollectEnvironmentSections(&document);
  return document;
}

absl::StatusOr<ConfigDocument> ParseConfigFile(const std::string& path) {
  absl::StatusOr<std::string> text = ReadInputFile(path, kConfigInput);
  if (!text.ok()) return text.status();
  return ParseConfigText(*text, path, ConfigFormatForPath(path));
}

ConfigDocument ParseArgumentList(const std::vector<std::string>& args) {
  std::vector<config_internal::Word> words;
  words.reserve(args.size());
  for (const std::string& arg : args) words.push_back(config_internal::Word{arg, Position{}});
  ConfigDocument document("<command line>", ConfigDialect::kMcoreArgs);
  config_internal::ReadArgs(words, &document);
  return document;
}

}  // namespace graphcheck::checks
