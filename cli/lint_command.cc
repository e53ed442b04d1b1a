#include "cli/lint_command.h"

#include <chrono>
#include <memory>

#include "cli/catalog.h"
#include "core/environment.h"

namespace graphcheck {
namespace {

struct LintOptions {
  bool env = false;
  OutputOptions output;
};

int Lint(const LintOptions& options, const CommandContext& context) {
  absl::StatusOr<ResolvedOutput> resolved = ResolveOutput(options.output);
  if (!resolved.ok()) return FailWith(resolved.status());
  if (!options.env) return FailWith(absl::InvalidArgumentError("nothing to lint: give --env"));

  Report report = NewReport("lint", context);
  const auto start = std::chrono::steady_clock::now();
  const Environment environment = Environment::FromCurrentProcess();
  CheckInputs inputs;
  inputs.environment = &environment;
  CheckRun run = RunChecks(BuiltinChecks(), resolved->selection, resolved->check_options, inputs);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  report.steps.push_back(Step{"lint-env", StepStatus::kOk, ms, ""});
  report.checks_run = std::move(run.checks_run);
  report.findings = std::move(run.findings);
  return EmitReport(report, *resolved);
}

}  // namespace

void AddLintCommand(CLI::App* app, CommandContext* context) {
  auto options = std::make_shared<LintOptions>();
  CLI::App* command = app->add_subcommand("lint", "Static checks that need no GPU");
  command->add_flag("--env", options->env, "Check the current environment variables");
  AddOutputOptions(command, &options->output);
  command->callback([options, context] { context->exit_code = Lint(*options, *context); });
}

}  // namespace graphcheck
