#include "cli/common.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "cli/catalog.h"
#include "core/exit_code.h"
#include "core/version.h"
#include "report/policy.h"

namespace graphcheck {

void AddOutputOptions(CLI::App* command, OutputOptions* output) {
  command->add_option("--format", output->format, "Report format: text, json, junit, sarif, markdown or html")
      ->check(CLI::IsMember({"text", "json", "junit", "sarif", "markdown", "html"}));
  command->add_option("-o,--output", output->output, "Write the report to FILE (default: stdout)");
  command->add_option("--fail-on", output->fail_on, "Exit 1 on findings at or above: error, warning or never")
      ->check(CLI::IsMember({"error", "warning", "never"}));
  command->add_option("--checks", output->checks, "Checks to run: comma list of globs, '-' excludes (default: all)");
  command->add_option("--check-option", output->check_options, "Set a check option: ID.NAME=VALUE (repeatable)");
}

absl::StatusOr<ResolvedOutput> ResolveOutput(const OutputOptions& output) {
  ResolvedOutput resolved;
  absl::StatusOr<ReportFormat> format = ParseReportFormat(output.format);
  if (!format.ok()) return format.status();
  absl::StatusOr<FailOn> fail_on = ParseFailOn(output.fail_on);
  if (!fail_on.ok()) return fail_on.status();
  absl::StatusOr<CheckSelection> selection = CheckSelection::Parse(output.checks);
  if (!selection.ok()) return selection.status();
  if (absl::Status s = selection->ValidateAgainst(BuiltinChecks()); !s.ok()) return s;
  for (const std::string& assignment : output.check_options) {
    if (absl::Status s = resolved.check_options.ParseAndSet(assignment); !s.ok()) return s;
  }
  if (absl::Status s = BuiltinChecks().ValidateOptions(resolved.check_options); !s.ok()) return s;
  resolved.path = output.output;
  resolved.render.format = *format;
  resolved.render.fail_on = *fail_on;
  resolved.render.checks = &BuiltinChecks();
  resolved.render.color = *format == ReportFormat::kText && (output.output.empty() || output.output == "-") &&
                          isatty(STDOUT_FILENO) != 0 && std::getenv("NO_COLOR") == nullptr;
  resolved.selection = *std::move(selection);
  return resolved;
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

int EmitReport(const Report& report, const ResolvedOutput& output) {
  if (absl::Status status = WriteOutput(output.path, RenderReport(report, output.render)); !status.ok()) {
    return FailWith(status);
  }
  return ExitCodeForReport(report, output.render.fail_on);
}

int FailWith(const absl::Status& status) {
  std::fprintf(stderr, "graphcheck: error: %s\n", std::string(status.message()).c_str());
  return ExitCodeForStatus(status);
}

void AddChecksRun(std::vector<std::string> ids, Report* report) {
  for (std::string& id : ids) {
    if (std::find(report->checks_run.begin(), report->checks_run.end(), id) == report->checks_run.end()) {
      report->checks_run.push_back(std::move(id));
    }
  }
}

void RunChecksInto(const CheckInputs& inputs, const ResolvedOutput& resolved, absl::string_view step, Report* report) {
  const auto start = std::chrono::steady_clock::now();
  CheckRun run = RunChecks(BuiltinChecks(), resolved.selection, resolved.check_options, inputs);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  report->steps.push_back(Step{std::string(step), StepStatus::kOk, ms, ""});
  AddChecksRun(std::move(run.checks_run), report);
  for (Finding& finding : run.findings) report->findings.push_back(std::move(finding));
}

}  // namespace graphcheck
