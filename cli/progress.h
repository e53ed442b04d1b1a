// Progress on long runs, on stderr and only when stderr is a terminal (never in reports, pipes or CI logs): one line,
// redrawn in place every 200 ms, naming the stage ("running python3 train.py", "reading trace 2/8", "analyzing") and
// the time elapsed since graphcheck started. One per process: every subcommand reports its stages to the same line.
#ifndef GRAPHCHECK_CLI_PROGRESS_H_
#define GRAPHCHECK_CLI_PROGRESS_H_

#include <string>

namespace graphcheck {

// Sets the stage shown; starts the redraw on the first call.
void ShowProgress(const std::string& stage);

// Clears the line and stops redrawing (before the report or an error is printed). ShowProgress starts it again.
void EndProgress();

}  // namespace graphcheck

#endif  // GRAPHCHECK_CLI_PROGRESS_H_
