// The configuration document model that the configuration checks read: every setting of a Megatron Bridge YAML /
// JSON file or a Megatron Core argument list as a flat entry (dotted key or --flag) with the line and column it was
// written at, so each finding can point at the exact place to change.
#ifndef GRAPHCHECK_CHECKS_CONFIG_CONFIG_DOCUMENT_H_
#define GRAPHCHECK_CHECKS_CONFIG_CONFIG_DOCUMENT_H_

#include <map>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "core/environment.h"
#include "core/finding.h"

namespace graphcheck::checks {

// 1-based; 0 = unknown (arguments given on the command line have no line).
struct Position {
  int line = 0;
  int column = 0;
};

// One scalar as written: "local", "true", "3".
struct ConfigScalar {
  std::string text;
  Position position;
};

struct ConfigEntry {
  enum class Kind {
    kScalar,  // `key: value`, `--flag value`
    kList,    // `key: [a, b]`, `--flag a b`
    kNull,    // `key: null` / `key: ~`
    kFlag,    // `--flag` with no value: a store_true / store_false switch
  };
  std::string key;  // "model.cuda_graph_impl" (nested documents) or "--cuda-graph-impl"
  Kind kind = Kind::kScalar;
  std::vector<ConfigScalar> values;  // one for kScalar, any number for kList, none otherwise
  Position position;                 // of the key
};

// Megatron Bridge's nested ConfigContainer (YAML, JSON) or Megatron Core's flat argparse names: the same setting is
// spelled differently and has a different default in each.
enum class ConfigDialect { kBridge, kMcoreArgs };

// Environment variables a configuration sets for the job: Bridge/NeMo-Run `env_vars:` style sections, or `NAME=value`
// words and `export NAME=value` lines in front of a launch command.
struct ConfigEnvironment {
  Environment variables;
  std::map<std::string, Position, std::less<>> positions;  // where each variable is set
};

class ConfigDocument {
 public:
  ConfigDocument(std::string file, ConfigDialect dialect) : file_(std::move(file)), dialect_(dialect) {}

  // Adds an entry; a later entry with the same key overrides an earlier one, as in argparse and YAML loaders.
  void Add(ConfigEntry entry);
  void SetEnvironmentVariable(std::string name, std::string value, Position position);

  const std::string& file() const { return file_; }
  ConfigDialect dialect() const { return dialect_; }
  const std::vector<ConfigEntry>& entries() const { return entries_; }
  const ConfigEnvironment& environment() const { return environment_; }
  // nullptr when the key is not in the document.
  const ConfigEntry* Find(absl::string_view key) const;

  // Where a finding about this entry (or one of its values) points.
  Location LocationOf(const ConfigEntry& entry) const;
  Location LocationOf(const ConfigEntry& entry, const ConfigScalar& value) const;
  // A finding about a setting that is absent points at the file and names the key to add.
  Location LocationOfMissing(absl::string_view key) const;

 private:
  std::string file_;
  ConfigDialect dialect_;
  std::vector<ConfigEntry> entries_;
  std::map<std::string, size_t, std::less<>> index_;  // key -> position in entries_
  ConfigEnvironment environment_;
};

}  // namespace graphcheck::checks

#endif  // GRAPHCHECK_CHECKS_CONFIG_CONFIG_DOCUMENT_H_
