// Internal to the configuration parser: one reader per format, each filling a ConfigDocument, plus what they share.
#ifndef GRAPHCHECK_CHECKS_CONFIG_CONFIG_READERS_H_
#define GRAPHCHECK_CHECKS_CONFIG_CONFIG_READERS_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "checks/config/config_document.h"

namespace graphcheck::checks {
namespace config_internal {

// Bounds that keep hostile input (YAML alias bombs, deep nesting) from exhausting memory or stack.
inline constexpr int kMaxDepth = 64;
inline constexpr size_t kMaxEntries = 100000;

absl::Status ReadYaml(absl::string_view text, ConfigDocument* document);
absl::Status ReadJson(absl::string_view text, ConfigDocument* document);

// A word of an argument list with where it was written (line 0 for the command line).
struct Word {
  std::string text;
  Position position;
};
// Shell-like words of an arguments file: quotes, backslash escapes and line continuations, '#' comments. A quote that
// is never closed is InvalidArgument "LINE:COLUMN: ..." (the shell would refuse the file too).
absl::StatusOr<std::vector<Word>> SplitWords(absl::string_view text);
void ReadArgs(const std::vector<Word>& words, ConfigDocument* document);

// "model" + "cuda_graph_impl" -> "model.cuda_graph_impl"
std::string JoinKey(absl::string_view prefix, absl::string_view name);
// InvalidArgument "FILE:LINE:COLUMN: MESSAGE".
absl::Status ErrorAt(const ConfigDocument& document, Position position, absl::string_view message);

}  // namespace config_internal
}  // namespace graphcheck::checks

#endif  // GRAPHCHECK_CHECKS_CONFIG_CONFIG_READERS_H_
