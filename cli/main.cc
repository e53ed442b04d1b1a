// graphcheck's command line: parsing and dispatch only. Each subcommand registers itself from its own file
// (cli/*_command.cc) and leaves its exit code in the CommandContext.
#include <CLI/CLI.hpp>

#include <string>

#include "cli/analyze_command.h"
#include "cli/catalog_commands.h"
#include "cli/check_command.h"
#include "cli/common.h"
#include "cli/diff_command.h"
#include "cli/lint_command.h"
#include "cli/report_command.h"
#include "cli/run_command.h"
#include "cli/trace_command.h"
#include "core/exit_code.h"
#include "core/version.h"

int main(int argc, char** argv) {
  CLI::App app{
      "graphcheck: can this PyTorch step be captured into CUDA graphs, what breaks it, and what do graphs "
      "save?"};
  app.set_version_flag("--version", std::string("graphcheck ") + graphcheck::kVersion);
  app.require_subcommand(1);

  graphcheck::CommandContext context;
  context.argv.assign(argv, argv + argc);
  graphcheck::AddListChecksCommand(&app, &context);
  graphcheck::AddExplainCommand(&app, &context);
  graphcheck::AddLintCommand(&app, &context);
  graphcheck::AddReportCommand(&app, &context);
  graphcheck::AddDiffCommand(&app, &context);
  graphcheck::AddRunCommand(&app, &context);
  graphcheck::AddCheckCommand(&app, &context);
  graphcheck::AddTraceCommand(&app, &context);
  graphcheck::AddAnalyzeCommand(&app, &context);

  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {  // --help, --version
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    graphcheck::FailWith(absl::InvalidArgumentError(std::string(e.what()) + " (see graphcheck --help)"));
    return graphcheck::kExitBadInput;
  }
  return context.exit_code;
}
