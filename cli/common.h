// What every subcommand shares: the output options (--format, -o, --fail-on, --checks, --check-option), their
// validation, building and emitting a report, and one-line errors.
#ifndef GRAPHCHECK_CLI_COMMON_H_
#define GRAPHCHECK_CLI_COMMON_H_

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/registry.h"
#include "core/report.h"
#include "report/output.h"

namespace graphcheck {

struct OutputOptions {
  std::string format = "text";             // text | json | junit | sarif | markdown | html
  std::string output;                      // -o FILE; empty = stdout
  std::string fail_on = "error";           // error | warning | never
  std::string checks;                      // --checks glob list
  std::vector<std::string> check_options;  // --check-option ID.NAME=VALUE
};

// The options after validation against the catalog.
struct ResolvedOutput {
  RenderOptions render;
  CheckSelection selection;
  CheckOptions check_options;
  std::string path;
};

// Every subcommand's registration gets this: the command line (for the report) and where to put the exit code.
struct CommandContext {
  std::vector<std::string> argv;
  int exit_code = 0;
};

void AddOutputOptions(CLI::App* command, OutputOptions* output);
// Validates before any work is done, so usage errors exit 2 at once.
absl::StatusOr<ResolvedOutput> ResolveOutput(const OutputOptions& output);

Report NewReport(absl::string_view mode, const CommandContext& context);
// Renders and writes the report; returns the exit code by the --fail-on policy (or 2 if it cannot be written).
int EmitReport(const Report& report, const ResolvedOutput& output);

// Runs the selected checks over `inputs` as step STEP and adds the checks that ran and their findings to `report`.
void RunChecksInto(const CheckInputs& inputs, const ResolvedOutput& resolved, absl::string_view step, Report* report);

// Adds `ids` to report->checks_run, skipping those already there.
void AddChecksRun(std::vector<std::string> ids, Report* report);

// Prints "graphcheck: error: MESSAGE" and returns the exit code for the status.
int FailWith(const absl::Status& status);

}  // namespace graphcheck

#endif  // GRAPHCHECK_CLI_COMMON_H_
