// `graphcheck report FILE.json`: re-render a saved JSON report (text, JSON, JUnit, SARIF, Markdown, HTML), applying
// --fail-on, the configuration file's severity overrides and --baseline again.
#ifndef GRAPHCHECK_CLI_REPORT_COMMAND_H_
#define GRAPHCHECK_CLI_REPORT_COMMAND_H_

#include "cli/common.h"

namespace graphcheck {

void AddReportCommand(CLI::App* app, CommandContext* context);

}  // namespace graphcheck

#endif  // GRAPHCHECK_CLI_REPORT_COMMAND_H_
