#include "cli/diff_command.h"

#include <memory>

#include "report/json.h"

namespace graphcheck {
namespace {

struct DiffOptions {
  std::string old_path;
  std::string new_path;
  OutputOptions output;
};

int Diff(const DiffOptions& options) {
  absl::StatusOr<CommandSettings> settings = ResolveSettings(options.output);
  if (!settings.ok()) return FailWith(settings.status());
  absl::StatusOr<Report> old_report = ReadReportFile(options.old_path);
  if (!old_report.ok()) return FailWith(old_report.status());
  absl::StatusOr<Report> new_report = ReadReportFile(options.new_path);
  if (!new_report.ok()) return FailWith(new_report.status());
  const ReportDiff diff = CompareReports(*std::move(old_report), *std::move(new_report), settings->output);
  const std::string text = settings->output.render.format == ReportFormat::kJson       ? ReportDiffToJson(diff)
                           : settings->output.render.format == ReportFormat::kMarkdown ? RenderDiffMarkdown(diff)
                                                                                       : RenderDiffText(diff);
  if (absl::Status status = WriteOutput(settings->output.path, text); !status.ok()) return FailWith(status);
  return ExitCodeForComparison(diff, settings->output);
}

}  // namespace

void AddDiffCommand(CLI::App* app, CommandContext* context) {
  auto options = std::make_shared<DiffOptions>();
  CLI::App* command = app->add_subcommand("diff", "Compare two saved JSON reports: new, gone and moved");
  command->add_option("OLD", options->old_path, "The earlier report (--format json)")->required();
  command->add_option("NEW", options->new_path, "The later report")->required();
  AddFormatOptions(command, &options->output, {"text", "json", "markdown"});
  AddPolicyOptions(command, &options->output);
  command->callback([options, context] { context->exit_code = Diff(*options); });
}

}  // namespace graphcheck
