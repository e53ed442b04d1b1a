// graphcheck's command line: parsing and dispatch only. Each subcommand registers itself from its own file
// (cli/*_command.cc) and leaves its exit code in the CommandContext. Bare `graphcheck` prints the help and exits 2
// (usage: no command ran); an unknown command is named in a one-line error (exit 2).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

#include "cli/analyze_command.h"
#include "cli/catalog_commands.h"
#include "cli/check_command.h"
#include "cli/common.h"
#include "cli/diff_command.h"
#include "cli/lint_command.h"
#include "cli/plan_command.h"
#include "cli/report_command.h"
#include "cli/run_command.h"
#include "cli/trace_command.h"
#include "core/exit_code.h"
#include "core/version.h"

namespace {

// The subcommands' names, in the order they were added.
std::vector<std::string> CommandNames(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* command : app.get_subcommands(std::function<bool(const CLI::App*)>())) {
    names.push_back(command->get_name());
  }
  return names;
}

// Every floating-point option of every command refuses nan and inf: CLI11 converts both, and "nan" passes its range
// checks (it compares false with any bound). One place, so that an option added later is covered too.
void RequireFiniteNumbers(CLI::App* app) {
  for (CLI::App* command : app->get_subcommands(std::function<bool(CLI::App*)>())) {
    for (CLI::Option* option : command->get_options()) {
      if (option->get_type_name().rfind("FLOAT", 0) == 0) {
        option->check(
            graphcheck::NumberIn(-std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()));
      }
    }
    RequireFiniteNumbers(command);
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "graphcheck: can this PyTorch step be captured into CUDA graphs, what breaks it, and what do graphs "
      "save?"};
  app.name("graphcheck");  // "Usage: graphcheck [OPTIONS] SUBCOMMAND"
  app.set_version_flag("--version", std::string("graphcheck ") + graphcheck::kVersion);
  app.require_subcommand(1);

  graphcheck::CommandContext context;
  context.argv.assign(argv, argv + argc);
  graphcheck::AddListChecksCommand(&app, &context);
  graphcheck::AddListMetricsCommand(&app, &context);
  graphcheck::AddExplainCommand(&app, &context);
  graphcheck::AddLintCommand(&app, &context);
  graphcheck::AddReportCommand(&app, &context);
  graphcheck::AddDiffCommand(&app, &context);
  graphcheck::AddRunCommand(&app, &context);
  graphcheck::AddCheckCommand(&app, &context);
  graphcheck::AddTraceCommand(&app, &context);
  graphcheck::AddAnalyzeCommand(&app, &context);
  graphcheck::AddPlanCommand(&app, &context);
  RequireFiniteNumbers(&app);

  // Bare `graphcheck`: the help, on stdout, and the usage exit code (no command ran; a script that forgot its command
  // must not pass).
  if (argc == 1) {
    std::fputs(app.help().c_str(), stdout);
    return graphcheck::kExitBadInput;
  }
  // CLI11 would take an unknown first word for a stray argument ("A subcommand is required"): name it instead.
  const std::vector<std::string> commands = CommandNames(app);
  if (const std::string first = argv[1];
      !first.empty() && first.front() != '-' && std::find(commands.begin(), commands.end(), first) == commands.end()) {
    return graphcheck::FailWith(absl::InvalidArgumentError(
        absl::StrCat("unknown command '", first, "' (commands: ", absl::StrJoin(commands, ", "), ")")));
  }

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
