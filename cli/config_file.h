// The configuration file, `.graphcheck.yaml`: check settings kept in the repository (docs/config-file.md). Found in
// the working directory or the nearest folder above it, or named with --config-file. It holds the checks to run, the
// severities to override, check options and numerics tolerances, the metric thresholds of --baseline, and the
// default --fail-on; command-line flags win. Every key is validated: an unknown key, check id or option, a bad value
// or a key given twice is an error naming the file, line and column.
#ifndef GRAPHCHECK_CLI_CONFIG_FILE_H_
#define GRAPHCHECK_CLI_CONFIG_FILE_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/registry.h"
#include "core/severity.h"
#include "report/baseline.h"
#include "report/finish.h"

namespace graphcheck {

inline constexpr char kConfigFileName[] = ".graphcheck.yaml";

struct ConfigFile {
  std::string path;
  std::string checks;  // --checks syntax, applied before the command line's
  CheckOptions check_options;
  std::vector<SeverityOverride> severities;
  std::vector<MetricThreshold> thresholds;
  std::string fail_on;  // "" when the file does not say
};

// Whether a comma list of check globs holds none ("", ",,,"): a selection of nothing, where the empty selection would
// otherwise mean every check. --checks and the file's checks refuse it alike.
bool HoldsNoCheckPattern(absl::string_view list);

// Parses and validates `text` (the contents of `path`) against the checks of `registry`.
absl::StatusOr<ConfigFile> ParseConfigFile(const std::string& path, absl::string_view text,
                                           const CheckRegistry& registry);

// The file named by --config-file (`explicit_path`), else the nearest .graphcheck.yaml from `start_dir` upward, else
// none. A named file that cannot be read is an error; so is a found one that is not valid.
absl::StatusOr<std::optional<ConfigFile>> LoadConfigFile(const std::string& explicit_path, const std::string& start_dir,
                                                         const CheckRegistry& registry);

}  // namespace graphcheck

#endif  // GRAPHCHECK_CLI_CONFIG_FILE_H_
