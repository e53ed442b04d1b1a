// Starting the user's program for `graphcheck run`: environment for the recorder, stderr teed and kept, SIGINT and
// SIGTERM forwarded, the exit status (or the signal that ended it) returned.
#ifndef GRAPHCHECK_CLI_PROGRAM_RUNNER_H_
#define GRAPHCHECK_CLI_PROGRAM_RUNNER_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace graphcheck {

struct ProgramResult {
  int exit_code = 0;  // valid when signal == 0
  int signal = 0;     // the signal that ended it, or 0
  double wall_ms = 0;
  std::vector<std::string> stderr_lines;  // what the program wrote to stderr (also passed through)
};

// InvalidArgument when the command cannot be started (not found, not executable).
absl::StatusOr<ProgramResult> RunProgram(const std::vector<std::string>& command,
                                         const std::map<std::string, std::string>& extra_environment);

// "exited with status 3", "killed by signal 11 (SIGSEGV)".
std::string DescribeProgramResult(const ProgramResult& result);

}  // namespace graphcheck

#endif  // GRAPHCHECK_CLI_PROGRAM_RUNNER_H_
