// `graphcheck diff OLD.json NEW.json`: what appeared, what went away (findings matched by fingerprint) and which
// metrics moved between two saved reports, as text, JSON or Markdown. Exits 1 when a finding at or above --fail-on
// appeared or a metric regressed beyond --max-regression, as `--baseline` does.
#ifndef GRAPHCHECK_CLI_DIFF_COMMAND_H_
#define GRAPHCHECK_CLI_DIFF_COMMAND_H_

#include "cli/common.h"

namespace graphcheck {

void AddDiffCommand(CLI::App* app, CommandContext* context);

}  // namespace graphcheck

#endif  // GRAPHCHECK_CLI_DIFF_COMMAND_H_
