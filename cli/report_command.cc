#include "cli/report_command.h"

#include <algorithm>
#include <memory>

namespace graphcheck {
namespace {

struct ReportOptions {
  std::string path;
  OutputOptions output;
};

// Re-renders a saved report. --checks keeps the findings (and the checks run) it selects; it takes no --check-option,
// which cannot change findings already made. A run that did not complete exits with the code it ended with.
int Rerender(const ReportOptions& options) {
  absl::StatusOr<CommandSettings> settings = ResolveSettings(options.output);
  if (!settings.ok()) return FailWith(settings.status());
  absl::StatusOr<Report> report = ReadReportFile(options.path);
  if (!report.ok()) return FailWith(report.status());
  // A report that names no file of its own (an older one, lint --env): SARIF points its findings at the report.
  settings->output.render.sarif_paths.default_artifact = options.path;
  const CheckSelection& selection = settings->checks.selection;
  report->findings.erase(std::remove_if(report->findings.begin(), report->findings.end(),
                                        [&](const Finding& f) { return !selection.Selects(f.check_id); }),
                         report->findings.end());
  report->checks_run.erase(std::remove_if(report->checks_run.begin(), report->checks_run.end(),
                                          [&](const std::string& id) { return !selection.Selects(id); }),
                           report->checks_run.end());
  return EmitReport(*report, settings->output);
}

}  // namespace

void AddReportCommand(CLI::App* app, CommandContext* context) {
  auto options = std::make_shared<ReportOptions>();
  CLI::App* command = app->add_subcommand("report", "Re-render a saved JSON report");
  command->add_option("FILE", options->path, "Report written with --format json")->required();
  AddRenderOptions(command, &options->output);
  command->callback([options, context] { context->exit_code = Rerender(*options); });
}

}  // namespace graphcheck
