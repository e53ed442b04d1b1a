// Reading training configurations into a ConfigDocument: Megatron Bridge YAML and JSON (nested, with line and column
// per key) and Megatron Core's flat arguments (from a file such as a launch script, or the command line). Every
// malformed input is an InvalidArgument status naming FILE:LINE:COLUMN; nothing throws past this border.
#ifndef GRAPHCHECK_CHECKS_CONFIG_CONFIG_PARSER_H_
#define GRAPHCHECK_CHECKS_CONFIG_CONFIG_PARSER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "checks/config/config_document.h"

namespace graphcheck::checks {

enum class ConfigFormat { kYaml, kJson, kArgs };

// By extension: .yaml / .yml, .json; anything else is read as Megatron Core arguments (a launch script, an args file).
ConfigFormat ConfigFormatForPath(absl::string_view path);

// `file` names the input in findings and errors.
absl::StatusOr<ConfigDocument> ParseConfigText(absl::string_view text, std::string file, ConfigFormat format);
absl::StatusOr<ConfigDocument> ParseConfigFile(const std::string& path);
// Megatron Core arguments given on graphcheck's command line (after `--`); they have no line numbers.
ConfigDocument ParseArgumentList(const std::vector<std::string>& args);

}  // namespace graphcheck::checks

#endif  // GRAPHCHECK_CHECKS_CONFIG_CONFIG_PARSER_H_
