// What every subcommand shares: the output options (--format, -o, --fail-on, --checks, --check-option, --baseline,
// --max-regression, --config-file), their validation merged with the configuration file's settings, building and
// emitting a report (severity overrides, baseline gating), and one-line errors.
#ifndef GRAPHCHECK_CLI_COMMON_H_
#define GRAPHCHECK_CLI_COMMON_H_

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cli/config_file.h"
#include "core/registry.h"
#include "core/report.h"
#include "report/baseline.h"
#include "report/output.h"

namespace graphcheck {

struct OutputOptions {
  std::string format = "text";              // text | json | junit | sarif | markdown | html
  std::string output;                       // -o FILE; empty = stdout
  std::string fail_on;                      // error | warning | never; "" = the configuration file's, else error
  std::string checks;                       // --checks glob list
  std::vector<std::string> check_options;   // --check-option ID.NAME=VALUE
  std::string baseline;                     // --baseline OLD.json
  std::vector<std::string> max_regression;  // --max-regression METRIC=PERCENT
  std::string config_file;                  // --config-file; "" = .graphcheck.yaml from the working directory up
};

// Which checks run and with which options: --checks and --check-option over the configuration file's.
struct CheckSettings {
  CheckSelection selection;
  CheckOptions options;
};

// Where the report goes and in which format, and what fails the command: --format, -o, --fail-on, --baseline and
// --max-regression over the configuration file's severities and thresholds.
struct OutputSettings {
  RenderOptions render;
  std::string path;
  std::vector<SeverityOverride> severities;
  std::optional<Report> baseline;
  std::string baseline_path;
  std::vector<MetricThreshold> thresholds;
};

// A subcommand's settings after validation against the catalogue, with the configuration file's under them.
struct CommandSettings {
  CheckSettings checks;
  OutputSettings output;
};

// Every subcommand's registration gets this: the command line (for the report) and where to put the exit code.
struct CommandContext {
  std::vector<std::string> argv;
  int exit_code = 0;
};

// --format (every report format), -o, the policy options, --baseline and --checks: what re-rendering a saved report
// takes.
void AddRenderOptions(CLI::App* command, OutputOptions* output);
// AddRenderOptions and --check-option: for the subcommands that run checks.
void AddOutputOptions(CLI::App* command, OutputOptions* output);
// The check of a numeric option: a finite number in [min, max] (an infinite bound: none on that side). main() puts
// NumberIn(-inf, inf) on every floating-point option of every command.
CLI::Validator NumberIn(double min, double max);
// The check of an option that names a file to write: not "" (which would write to standard output unasked).
const CLI::Validator& OutputFile();
// The parts of AddOutputOptions that `graphcheck diff` shares: --format among `formats`, -o, and --fail-on,
// --max-regression and --config-file.
void AddFormatOptions(CLI::App* command, OutputOptions* output, const std::vector<std::string>& formats);
void AddPolicyOptions(CLI::App* command, OutputOptions* output);
// Validates before any work is done, so usage errors exit 2 at once.
absl::StatusOr<CommandSettings> ResolveSettings(const OutputOptions& output);

Report NewReport(absl::string_view mode, const CommandContext& context);
// Finishes (report/finish.h), renders and writes the report; returns the exit code by the --fail-on policy, or with
// --baseline by what is new or regressed against it (or 2 if it cannot be written).
int EmitReport(const Report& report, const OutputSettings& output);

// The comparison of `now` with an earlier report, both with the severity overrides applied.
ReportDiff CompareReports(Report before, Report now, const OutputSettings& output);
// The exit code of a comparison (new findings at or above --fail-on, metric regressions), each reason on stderr.
int ExitCodeForComparison(const ReportDiff& diff, const OutputSettings& output);

// Reads a JSON report; InvalidArgument naming the file when it is not one.
absl::StatusOr<Report> ReadReportFile(const std::string& path);

// Runs the selected checks over `inputs` as step STEP and adds the checks that ran and their findings to `report`.
void RunChecksInto(const CheckInputs& inputs, const CheckSettings& checks, absl::string_view step, Report* report);

// Adds `ids` to report->checks_run, skipping those already there.
void AddChecksRun(std::vector<std::string> ids, Report* report);

// Damage the trace reader stepped over in `path`, one "graphcheck: warning: PATH: WARNING" line each on stderr: worth
// knowing, but the rest of the trace is good and the command goes on.
void PrintReadWarnings(const std::string& path, const std::vector<std::string>& warnings);

// Prints "graphcheck: error: MESSAGE" and returns the exit code for the status.
int FailWith(const absl::Status& status);

}  // namespace graphcheck

#endif  // GRAPHCHECK_CLI_COMMON_H_
