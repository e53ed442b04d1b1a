#include "cli/report_command.h"

#include <memory>

namespace graphcheck {
namespace {

struct ReportOptions {
  std::string path;
  OutputOptions output;
};

int Rerender(const ReportOptions& options) {
  absl::StatusOr<ResolvedOutput> resolved = ResolveOutput(options.output);
  if (!resolved.ok()) return FailWith(resolved.status());
  absl::StatusOr<Report> report = ReadReportFile(options.path);
  if (!report.ok()) return FailWith(report.status());
  return EmitReport(*report, *resolved);
}

}  // namespace

void AddReportCommand(CLI::App* app, CommandContext* context) {
  auto options = std::make_shared<ReportOptions>();
  CLI::App* command = app->add_subcommand("report", "Re-render a saved JSON report");
  command->add_option("FILE", options->path, "Report written with --format json")->required();
  AddOutputOptions(command, &options->output);
  command->callback([options, context] { context->exit_code = Rerender(*options); });
}

}  // namespace graphcheck
