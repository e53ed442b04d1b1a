#include "cli/plan_command.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "analysis/capture_plan.h"
#include "cli/analyze_command.h"
#include "core/utf8.h"
#include "report/capture_plan.h"
#include "trace/trace_reader.h"

namespace graphcheck {
namespace {

struct PlanOptions {
  std::vector<std::string> traces;
  OutputOptions output;
};

int Plan(const PlanOptions& options) {
  absl::StatusOr<CommandSettings> settings = ResolveSettings(options.output);
  if (!settings.ok()) return FailWith(settings.status());
  absl::StatusOr<std::vector<std::string>> files = ExpandTracePaths(options.traces);
  if (!files.ok()) return FailWith(files.status());
  std::vector<trace::Trace> traces;
  for (const std::string& path : *files) {
    absl::StatusOr<trace::Trace> trace = trace::ReadTrace(path);
    if (!trace.ok()) return FailWith(trace.status());  // it names the path already
    PrintReadWarnings(path, trace->read_warnings);
    traces.push_back(*std::move(trace));
  }
  std::vector<const trace::Trace*> pointers;
  for (const trace::Trace& t : traces) pointers.push_back(&t);
  absl::StatusOr<CapturePlan> plan = analysis::PlanCaptures(pointers, analysis::PlanModel());
  if (!plan.ok()) return FailWith(plan.status());
  plan->subject = options.traces.size() == 1 ? options.traces.front() : absl::StrJoin(options.traces, " ");
  const std::string text = RenderCapturePlan(*plan, settings->output.render.format);
  if (absl::Status status = WriteOutput(settings->output.path, text); !status.ok()) return FailWith(status);
  return 0;
}

}  // namespace

void AddPlanCommand(CLI::App* app, CommandContext* context) {
  auto options = std::make_shared<PlanOptions>();
  CLI::App* command = app->add_subcommand(
      "plan", "Which shapes to capture: bucket sets from an eager run recorded with `graphcheck run --plan`");
  command->add_option("TRACE", options->traces, "Trace files, or folders searched for *.gctrace")->required();
  AddFormatOptions(command, &options->output, {"text", "json", "markdown", "html"});
  command->callback([options, context] { context->exit_code = Plan(*options); });
}

}  // namespace graphcheck
