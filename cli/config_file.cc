#include "cli/config_file.h"

#include <filesystem>
#include <set>
#include <system_error>

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/file_io.h"
#include "report/output.h"

namespace graphcheck {
namespace {

// "FILE:LINE:COLUMN: " for a node (yaml-cpp counts from 0).
std::string Position(const std::string& path, const YAML::Mark& mark) {
  return absl::StrCat(path, ":", mark.line + 1, ":", mark.column + 1, ": ");
}

class Parser {
 public:
  Parser(const std::string& path, const CheckRegistry& registry) : path_(path), registry_(registry) {}

  absl::Status Error(const YAML::Node& node, absl::string_view message) const {
    return absl::InvalidArgumentError(absl::StrCat(Position(path_, node.Mark()), message));
  }

  // The entries of a mapping, rejecting a key given twice and any key `allowed` lacks (when given).
  absl::StatusOr<std::vector<std::pair<YAML::Node, YAML::Node>>> Entries(
      const YAML::Node& node, absl::string_view what, const std::vector<std::string>* allowed = nullptr) const {
    if (!node.IsMap()) return Error(node, absl::StrCat(what, " must be a mapping"));
    std::vector<std::pair<YAML::Node, YAML::Node>> entries;
    std::set<std::string> seen;
    for (const auto& entry : node) {
      if (!entry.first.IsScalar()) return Error(entry.first, absl::StrCat("a key of ", what, " is not a string"));
      const std::string key = entry.first.Scalar();
      if (!seen.insert(key).second) return Error(entry.first, absl::StrCat("key '", key, "' is given twice"));
      if (allowed != nullptr && std::find(allowed->begin(), allowed->end(), key) == allowed->end()) {
        return Error(entry.first, absl::StrCat("unknown key '", key, "' in ", what, " (expected ",
                                               absl::StrJoin(*allowed, ", "), ")"));
      }
      entries.emplace_back(entry.first, entry.second);
    }
    return entries;
  }

  absl::StatusOr<std::string> Scalar(const YAML::Node& node, absl::string_view what) const {
    if (!node.IsScalar()) return Error(node, absl::StrCat(what, " must be a single value"));
    return node.Scalar();
  }

  // A check id or glob that must name at least one registered check.
  absl::Status CheckPattern(const YAML::Node& node, const std::string& pattern) const {
    absl::StatusOr<CheckSelection> selection = CheckSelection::Parse(pattern);
    if (!selection.ok()) return Error(node, selection.status().message());
    if (absl::Status s = selection->ValidateAgainst(registry_); !s.ok()) return Error(node, s.message());
    return absl::OkStatus();
  }

  absl::Status Checks(const YAML::Node& node, ConfigFile* config) const {
    std::vector<std::string> patterns;
    if (node.IsScalar()) {
      patterns.push_back(node.Scalar());
    } else if (node.IsSequence()) {
      for (const YAML::Node& item : node) {
        absl::StatusOr<std::string> pattern = Scalar(item, "an entry of checks");
        if (!pattern.ok()) return pattern.status();
        if (absl::Status s = CheckPattern(item, *pattern); !s.ok()) return s;
        patterns.push_back(*pattern);
      }
    } else {
      return Error(node, "checks must be a list of check ids or globs ('-' excludes)");
    }
    const std::string spec = absl::StrJoin(patterns, ",");
    if (HoldsNoCheckPattern(spec)) return Error(node, "checks selects no check (see graphcheck list-checks)");
    if (node.IsScalar()) {
      if (absl::Status s = CheckPattern(node, spec); !s.ok()) return s;
    }
    // Blamed here, on the file's line, rather than later on the merged selection, which would name --checks.
    if (absl::StatusOr<CheckSelection> selection = CheckSelection::Parse(spec);
        selection.ok() && !selection->SelectsAnyOf(registry_)) {
      return Error(node, absl::StrCat("checks '", spec, "' selects no check (see graphcheck list-checks)"));
    }
    config->checks = spec;
    return absl::OkStatus();
  }

  // Calls `take(key, value, text)` for each entry of a mapping whose values are single values.
  template <typename Take>
  absl::Status ForEachValue(const YAML::Node& node, absl::string_view what, Take take) const {
    auto entries = Entries(node, what);
    if (!entries.ok()) return entries.status();
    for (const auto& [key, value] : *entries) {
      absl::StatusOr<std::string> text = Scalar(value, absl::StrCat("a value of ", what));
      if (!text.ok()) return text.status();
      if (absl::Status s = take(key, value, *text); !s.ok()) return s;
    }
    return absl::OkStatus();
  }

  absl::Status Severities(const YAML::Node& node, ConfigFile* config) const {
    return ForEachValue(node, "severity", [&](const YAML::Node& key, const YAML::Node& value, const std::string& text) {
      if (absl::Status s = CheckPattern(key, key.Scalar()); !s.ok()) return s;
      absl::StatusOr<Severity> severity = ParseSeverity(text);
      if (!severity.ok()) return Error(value, absl::StrCat("severity '", text, "' must be error, warning or note"));
      config->severities.push_back({key.Scalar(), *severity});
      return absl::OkStatus();
    });
  }

  absl::Status SetOption(const YAML::Node& where, const std::string& id, const std::string& name,
                         const std::string& value, ConfigFile* config) const {
    CheckOptions one;
    one.Set(id, name, value);
    if (absl::Status s = registry_.ValidateOptions(one); !s.ok()) return Error(where, s.message());
    config->check_options.Set(id, name, value);
    return absl::OkStatus();
  }

  absl::Status Options(const YAML::Node& node, ConfigFile* config) const {
    auto checks = Entries(node, "options");
    if (!checks.ok()) return checks.status();
    for (const auto& entry : *checks) {
      const YAML::Node& id = entry.first;  // not a structured binding: C++17 lambdas cannot capture those (clang)
      const YAML::Node& options = entry.second;
      absl::Status status = ForEachValue(options, absl::StrCat("options of ", id.Scalar()),
                                         [&](const YAML::Node& name, const YAML::Node&, const std::string& text) {
                                           return SetOption(name, id.Scalar(), name.Scalar(), text, config);
                                         });
      if (!status.ok()) return status;
    }
    return absl::OkStatus();
  }

  // `tolerances: {bfloat16: 0.02}` sets option rtol-bfloat16 of every check that has one (the numerics checks).
  absl::Status Tolerances(const YAML::Node& node, ConfigFile* config) const {
    return ForEachValue(
        node, "tolerances", [&](const YAML::Node& dtype, const YAML::Node& value, const std::string& text) {
          const std::string option = absl::StrCat("rtol-", dtype.Scalar());
          bool any = false;
          for (const Check* check : registry_.All()) {
            for (const CheckOption& declared : check->info().options) {
              if (declared.name != option) continue;
              any = true;
              if (absl::Status s = SetOption(value, check->info().id, option, text, config); !s.ok()) return s;
            }
          }
          return any ? absl::OkStatus()
                     : Error(dtype, absl::StrCat("no check has a tolerance for '", dtype.Scalar(), "'"));
        });
  }

  absl::Status Thresholds(const YAML::Node& node, ConfigFile* config) const {
    return ForEachValue(
        node, "max-regression", [&](const YAML::Node& metric, const YAML::Node& value, const std::string& text) {
          absl::StatusOr<MetricThreshold> threshold = ParseThreshold(absl::StrCat(metric.Scalar(), "=", text));
          if (!threshold.ok()) return Error(value, absl::StrCat("max-regression ", threshold.status().message()));
          SetThreshold(*std::move(threshold), &config->thresholds);
          return absl::OkStatus();
        });
  }

  absl::Status FailOn(const YAML::Node& node, ConfigFile* config) const {
    absl::StatusOr<std::string> text = Scalar(node, "fail-on");
    if (!text.ok()) return text.status();
    if (absl::StatusOr<graphcheck::FailOn> parsed = ParseFailOn(*text); !parsed.ok()) {
      return Error(node, absl::StrCat("fail-on '", *text, "' must be error, warning or never"));
    }
    config->fail_on = *text;
    return absl::OkStatus();
  }

  absl::StatusOr<ConfigFile> Parse(const YAML::Node& root) const {
    ConfigFile config;
    config.path = path_;
    if (root.IsNull()) return config;  // an empty file
    static const std::vector<std::string> kKeys = {"version",    "checks",         "severity", "options",
                                                   "tolerances", "max-regression", "fail-on"};
    auto entries = Entries(root, "the configuration", &kKeys);
    if (!entries.ok()) return entries.status();
    for (const auto& [key, value] : *entries) {
      const std::string& name = key.Scalar();
      absl::Status status;
      if (name == "version") {
        if (!value.IsScalar() || value.Scalar() != "1") status = Error(value, "version must be 1");
      } else if (name == "checks") {
        status = Checks(value, &config);
      } else if (name == "severity") {
        status = Severities(value, &config);
      } else if (name == "options") {
        status = Options(value, &config);
      } else if (name == "tolerances") {
        status = Tolerances(value, &config);
      } else if (name == "max-regression") {
        status = Thresholds(value, &config);
      } else {
        status = FailOn(value, &config);
      }
      if (!status.ok()) return status;
    }
    return config;
  }

 private:
  const std::string& path_;
  const CheckRegistry& registry_;
};

}  // namespace

bool HoldsNoCheckPattern(absl::string_view list) {
  const std::vector<absl::string_view> patterns = absl::StrSplit(list, ',', absl::SkipWhitespace());
  return patterns.empty();
}

absl::StatusOr<ConfigFile> ParseConfigFile(const std::string& path, absl::string_view text,
                                           const CheckRegistry& registry) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::DeepRecursion& e) {  // yaml-cpp's own message for it is "bad file"
    return absl::InvalidArgumentError(
        absl::StrCat(Position(path, e.mark), "nesting is too deep (more than ", e.depth() - 1, " levels)"));
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(Position(path, e.mark), e.msg));
  }
  return Parser(path, registry).Parse(root);
}

absl::StatusOr<std::optional<ConfigFile>> LoadConfigFile(const std::string& explicit_path, const std::string& start_dir,
                                                         const CheckRegistry& registry) {
  std::string path = explicit_path;
  if (path.empty()) {
    for (std::filesystem::path dir = start_dir; !dir.empty(); dir = dir.parent_path()) {
      std::error_code unused;
      if (std::filesystem::exists(dir / kConfigFileName, unused)) {
        path = (dir / kConfigFileName).string();
        break;
      }
      if (dir == dir.parent_path()) break;  // the root
    }
    if (path.empty()) return std::optional<ConfigFile>();
  }
  absl::StatusOr<std::string> text = ReadInputFile(path, kConfigInput);
  if (!text.ok()) return text.status();
  absl::StatusOr<ConfigFile> config = ParseConfigFile(path, *text, registry);
  if (!config.ok()) return config.status();
  return std::optional<ConfigFile>(*std::move(config));
}

}  // namespace graphcheck
