// `graphcheck analyze TRACE... [--region NAME] [--step-range A:B] [--stderr FILE]`: the checks over trace files
// recorded earlier (any machine, no GPU needed), merged into one report of mode "analyze".
#ifndef GRAPHCHECK_CLI_ANALYZE_COMMAND_H_
#define GRAPHCHECK_CLI_ANALYZE_COMMAND_H_

#include "cli/common.h"

namespace graphcheck {

void AddAnalyzeCommand(CLI::App* app, CommandContext* context);

// How iterations are cut, shared by `analyze` and `run`: --region NAME (an NVTX range) and --step-range FIRST:LAST.
struct IterationFlags {
  std::string region;
  std::string step_range;
  // False when graphcheck chose the region itself (check's engine steps): a trace without it then has no steps (an
  // engine that stopped before its first step), which is not the user's mistake.
  bool region_must_match = true;
};
void AddIterationFlags(CLI::App* command, IterationFlags* flags);

// The traces behind the paths given: files as they are, folders searched (with their subfolders) for *.gctrace, so
// that `graphcheck analyze DIR...` takes every rank of a job, each node's folder or all of them. Sorted, no repeats.
absl::StatusOr<std::vector<std::string>> ExpandTracePaths(const std::vector<std::string>& paths);

// Where the traces come from: one recorded run (one job by construction), or paths a user gave, which may hold
// unrelated runs (the examples' folder).
enum class TraceOrigin { kOneRun, kUserPaths };

// Reads every trace (InvalidArgument naming the file when one is not a graphcheck trace, or, for kUserPaths, when
// the traces are of more than one job), analyzes them with the program's stderr lines (may be null) and adds the
// analyze step, the checks that ran, the findings, the metrics and the GPU to `report`.
absl::Status AnalyzeTraceFilesInto(const std::vector<std::string>& paths, const std::vector<std::string>* stderr_lines,
                                   const IterationFlags& flags, const CheckSettings& checks, Report* report,
                                   TraceOrigin origin = TraceOrigin::kOneRun);

}  // namespace graphcheck

#endif  // GRAPHCHECK_CLI_ANALYZE_COMMAND_H_
