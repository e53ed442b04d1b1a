#include "cli/common.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/catalog.h"
#include "cli/progress.h"
#include "core/exit_code.h"
#include "core/file_io.h"
#include "core/plural.h"
#include "core/utf8.h"
#include "core/version.h"
#include "report/json.h"
#include "report/policy.h"
#include "trace/trace_reader.h"

namespace graphcheck {
namespace {

// The repository the working directory is in (the nearest folder upward holding .git), else the working directory:
// SARIF's %SRCROOT%, against which code scanning resolves the results' files.
std::string SourceRoot(const std::filesystem::path& working_dir) {
  std::error_code error;
  for (std::filesystem::path dir = working_dir; !dir.empty(); dir = dir.parent_path()) {
    if (std::filesystem::exists(dir / ".git", error)) return dir.string();
    if (dir == dir.parent_path()) break;
  }
  return working_dir.string();
}

std::string NoEmptySelection(std::string& spec) {
  return HoldsNoCheckPattern(spec) ? std::string("selects no check (see graphcheck list-checks)") : std::string();
}

}  // namespace

CLI::Validator NumberIn(double min, double max) {
  // The bounds as a user writes them ("at least 1", not DBL_MAX's 309 digits).
  const std::string bounds = std::isinf(min) && std::isinf(max) ? ""
                             : std::isinf(max)                  ? absl::StrCat(" of at least ", min)
                                                                : absl::StrCat(" in [", min, ", ", max, "]");
  return CLI::Validator(
      [min, max, bounds](std::string& text) {
        double value = 0;
        // "nan" passes every range check (it compares false) and "inf" or "1e999" none: refuse both by name.
        if (absl::SimpleAtod(text, &value) && std::isfinite(value) && value >= min && value <= max)
          return std::string();
        return absl::StrCat("'", text, "' must be a finite number", bounds);
      },
      bounds.empty() ? "FINITE" : absl::StrCat("NUMBER", bounds));
}

const CLI::Validator& OutputFile() {
  static const CLI::Validator validator(
      [](std::string& path) {
        return path.empty() ? std::string("needs a file name ('-' for standard output)") : std::string();
      },
      "FILE");
  return validator;
}

void AddFormatOptions(CLI::App* command, OutputOptions* output, const std::vector<std::string>& formats) {
  command->add_option("--format", output->format, absl::StrCat("Output format: ", absl::StrJoin(formats, ", ")))
      ->check(CLI::IsMember(formats));
  command->add_option("-o,--output", output->output, "Write to FILE (default: stdout)")->check(OutputFile());
}

void AddPolicyOptions(CLI::App* command, OutputOptions* output) {
  command->add_option("--fail-on", output->fail_on, "Exit 1 on findings at or above: error (default), warning or never")
      ->check(CLI::IsMember({"error", "warning", "never"}));
  command->add_option("--max-regression", output->max_regression,
                      "With a baseline: fail when METRIC gets worse by more than PERCENT, METRIC=PERCENT "
                      "(repeatable; defaults: graphed.speedup, launch.iteration_us, graphed.iteration_us, "
                      "coverage.graphed_gpu_time_share at 10%)");
  command->add_option("--config-file", output->config_file,
                      "Configuration file (default: .graphcheck.yaml in the working directory or above)");
}

void AddRenderOptions(CLI::App* command, OutputOptions* output) {
  AddFormatOptions(command, output, {"text", "json", "junit", "sarif", "markdown", "html"});
  AddPolicyOptions(command, output);
  command->add_option("--baseline", output->baseline,
                      "A JSON report of an earlier run: fail only on findings that are new against it, or on metric "
                      "regressions beyond --max-regression");
  // Re-rendering a saved report runs no check: --checks keeps the findings of the selected ones (AddOutputOptions
  // says "to run" for the commands that do run them).
  command
      ->add_option("--checks", output->checks,
                   "Show only the findings of these checks: comma list of globs, '-' excludes (default: all)")
      ->check(CLI::Validator(NoEmptySelection, "GLOBS"));
}

void AddOutputOptions(CLI::App* command, OutputOptions* output) {
  AddRenderOptions(command, output);
  command->get_option("--checks")->description("Checks to run: comma list of globs, '-' excludes (default: all)");
  command->add_option("--check-option", output->check_options, "Set a check option: ID.NAME=VALUE (repeatable)");
}

absl::StatusOr<CommandSettings> ResolveSettings(const OutputOptions& output) {
  CommandSettings settings;
  CheckSettings& checks = settings.checks;
  OutputSettings& resolved = settings.output;
  absl::StatusOr<std::optional<ConfigFile>> config =
      LoadConfigFile(output.config_file, std::filesystem::current_path().string(), BuiltinChecks());
  if (!config.ok()) return config.status();
  const ConfigFile file = config->value_or(ConfigFile{});
  absl::StatusOr<ReportFormat> format = ParseReportFormat(output.format);
  if (!format.ok()) return format.status();
  // Command-line flags win: their globs come after the file's, their options and thresholds replace the file's.
  absl::StatusOr<FailOn> fail_on = ParseFailOn(!output.fail_on.empty() ? output.fail_on
                                               : !file.fail_on.empty() ? file.fail_on
                                                                       : "error");
  if (!fail_on.ok()) return fail_on.status();
  const std::string globs =
      file.checks.empty() || output.checks.empty() ? file.checks + output.checks : file.checks + "," + output.checks;
  absl::StatusOr<CheckSelection> selection = CheckSelection::Parse(globs);
  if (!selection.ok()) return selection.status();
  if (absl::Status s = selection->ValidateAgainst(BuiltinChecks()); !s.ok()) return s;
  if (!selection->SelectsAnyOf(BuiltinChecks())) {
    return absl::InvalidArgumentError(
        absl::StrCat("--checks '", globs, "' selects no check (see graphcheck list-checks)"));
  }
  checks.options = file.check_options;
  for (const std::string& assignment : output.check_options) {
    if (absl::Status s = checks.options.ParseAndSet(assignment); !s.ok()) return s;
  }
  if (absl::Status s = BuiltinChecks().ValidateOptions(checks.options); !s.ok()) return s;
  resolved.thresholds = DefaultThresholds();
  for (const MetricThreshold& threshold : file.thresholds) SetThreshold(threshold, &resolved.thresholds);
  for (const std::string& text : output.max_regression) {
    absl::StatusOr<MetricThreshold> threshold = ParseThreshold(text);
    if (!threshold.ok())
      return absl::InvalidArgumentError(absl::StrCat("--max-regression ", threshold.status().message()));
    SetThreshold(*std::move(threshold), &resolved.thresholds);
  }
  if (!output.baseline.empty()) {
    absl::StatusOr<Report> baseline = ReadReportFile(output.baseline);
    if (!baseline.ok()) return absl::InvalidArgumentError(absl::StrCat("--baseline: ", baseline.status().message()));
    resolved.baseline = *std::move(baseline);
    resolved.baseline_path = output.baseline;
  }
  resolved.severities = file.severities;
  resolved.path = output.output;
  resolved.render.format = *format;
  resolved.render.fail_on = *fail_on;
  resolved.render.checks = &BuiltinChecks();
  const std::filesystem::path working_dir = std::filesystem::current_path();
  resolved.render.sarif_paths = SarifPaths{SourceRoot(working_dir), working_dir.string()};
  resolved.render.color = *format == ReportFormat::kText && (output.output.empty() || output.output == "-") &&
                          isatty(STDOUT_FILENO) != 0 && std::getenv("NO_COLOR") == nullptr;
  checks.selection = *std::move(selection);
  return settings;
}

Report NewReport(absl::string_view mode, const CommandContext& context) {
  Report report;
  report.tool_version = kVersion;
  report.mode = std::string(mode);
  report.command = context.argv;
  char hostname[256] = {0};
  if (gethostname(hostname, sizeof(hostname) - 1) == 0) report.machine.hostname = hostname;
  return report;
}

int EmitReport(const Report& report, const OutputSettings& output) {
  EndProgress();
  Report final_report = report;
  FinishReport(output.severities, &final_report);
  if (absl::Status status = WriteOutput(output.path, RenderReport(final_report, output.render)); !status.ok()) {
    return FailWith(status);
  }
  if (final_report.incomplete) {
    std::fprintf(stderr, "graphcheck: the run did not complete (exit %d): %s\n", final_report.incomplete->exit_code,
                 LineText(final_report.incomplete->reason).c_str());
    return final_report.incomplete->exit_code;  // a baseline cannot make a run that never happened pass
  }
  if (!output.baseline) return ExitCodeForReport(final_report, output.render.fail_on);
  const ReportDiff diff = CompareReports(*output.baseline, final_report, output);
  std::fprintf(stderr, "graphcheck: against baseline %s: %zu new, %zu gone, %s moved\n",
               LineText(output.baseline_path).c_str(), diff.appeared.size(), diff.gone.size(),
               Plural(diff.moved.size(), "metric", "metrics").c_str());
  return ExitCodeForComparison(diff, output);
}

ReportDiff CompareReports(Report before, Report now, const OutputSettings& output) {
  ApplySeverityOverrides(output.severities, &before.findings);
  ApplySeverityOverrides(output.severities, &now.findings);
  return DiffReports(before, now, output.thresholds);
}

int ExitCodeForComparison(const ReportDiff& diff, const OutputSettings& output) {
  std::vector<std::string> reasons;
  const int exit_code = ExitCodeForDiff(diff, output.render.fail_on, &reasons);
  // A run can hold 100,000 new findings: stderr names the first few, the report has them all.
  constexpr size_t kMaxReasonLines = 20;
  for (size_t i = 0; i < reasons.size() && i < kMaxReasonLines; ++i) {
    std::fprintf(stderr, "graphcheck: %s\n", LineText(reasons[i]).c_str());
  }
  if (reasons.size() > kMaxReasonLines) {
    std::fprintf(stderr, "graphcheck: ... and %zu more (the report lists them)\n", reasons.size() - kMaxReasonLines);
  }
  return exit_code;
}

absl::StatusOr<Report> ReadReportFile(const std::string& path) {
  absl::StatusOr<std::string> text = ReadInputFile(path, kReportInput);
  if (!text.ok()) return text.status();
  if (text->empty())
    return absl::InvalidArgumentError(absl::StrCat(path, ": the file is empty (0 bytes), not a report"));
  absl::StatusOr<Report> report = ReportFromJson(*text);
  // A trace given where a report goes is a newcomer's likely mix-up: name it and the command that reads it.
  if (!report.ok() && trace::ReadTraceFromBytes(*text).ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": a graphcheck trace, not a report: analyze it with `graphcheck analyze ", path, "`"));
  }
  if (!report.ok()) return absl::InvalidArgumentError(absl::StrCat(path, ": ", report.status().message()));
  return report;
}

void PrintReadWarnings(const std::string& path, const std::vector<std::string>& warnings) {
  for (const std::string& warning : warnings) {
    std::fprintf(stderr, "graphcheck: warning: %s: %s\n", LineText(path).c_str(), LineText(warning).c_str());
  }
}

int FailWith(const absl::Status& status) {
  EndProgress();
  // The message may quote the input (a path, bytes of a binary file): never let it drive the terminal.
  std::fprintf(stderr, "graphcheck: error: %s\n", LineText(status.message()).c_str());
  return ExitCodeForStatus(status);
}

void AddChecksRun(std::vector<std::string> ids, Report* report) {
  for (std::string& id : ids) {
    if (std::find(report->checks_run.begin(), report->checks_run.end(), id) == report->checks_run.end()) {
      report->checks_run.push_back(std::move(id));
    }
  }
}

void RunChecksInto(const CheckInputs& inputs, const CheckSettings& checks, absl::string_view step, Report* report) {
  const auto start = std::chrono::steady_clock::now();
  CheckRun run = RunChecks(BuiltinChecks(), checks.selection, checks.options, inputs);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  report->steps.push_back(Step{std::string(step), StepStatus::kOk, ms, ""});
  AddChecksRun(std::move(run.checks_run), report);
  for (Finding& finding : run.findings) report->findings.push_back(std::move(finding));
}

}  // namespace graphcheck
