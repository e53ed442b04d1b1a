// Process exit codes, the same for every subcommand (docs/architecture.md, Failure behaviour; the README's table).
#ifndef GRAPHCHECK_CORE_EXIT_CODE_H_
#define GRAPHCHECK_CORE_EXIT_CODE_H_

#include "absl/status/status.h"

namespace graphcheck {

enum ExitCode : int {
  kExitClean = 0,               // nothing at or above --fail-on
  kExitFindings = 1,            // findings at or above --fail-on
  kExitBadInput = 2,            // bad command line, model, trace, config or report file
  kExitEnvironmentMissing = 3,  // no GPU, no driver, CUPTI unavailable
};

// The exit code for a Status that ends a command: kFailedPrecondition/kUnavailable mean the environment is missing
// (exit 3); everything else is bad input (exit 2). Internal errors are bugs and also exit 2 rather than crash.
inline int ExitCodeForStatus(const absl::Status& status) {
  if (status.ok()) return kExitClean;
  if (status.code() == absl::StatusCode::kFailedPrecondition || status.code() == absl::StatusCode::kUnavailable) {
    return kExitEnvironmentMissing;
  }
  return kExitBadInput;
}

}  // namespace graphcheck

#endif  // GRAPHCHECK_CORE_EXIT_CODE_H_
