#include "core/file_io.h"
#include "cli/analyze_command.h"

#include <chrono>
#include <cstdio>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "analyzers/analyze.h"
#include "analyzers/iterations.h"
#include "cli/catalog.h"
#include "cli/progress.h"
#include "core/trace/trace_reader.h"

namespace graphcheck {
namespace {

struct AnalyzeOptions {
  std::vector<std::string> traces;
  IterationFlags iteration;
  std::string stderr_path;
  OutputOptions output;
};

// --region and --step-range set the `region` / `steps` option of every check that has one, unless the user set
// that check's option with --check-option.
void ApplyIterationFlags(const IterationFlags& flags, CheckOptions* check_options) {
  for (const Check* check : BuiltinChecks().All()) {
    for (const CheckOption& option : check->info().options) {
      const std::string* value = option.name == "region"  ? &flags.region
                                 : option.name == "steps" ? &flags.step_range
                                                          : nullptr;
      if (value == nullptr || value->empty() || check_options->Find(check->info().id, option.name) != nullptr) {
        continue;
      }
      check_options->Set(check->info().id, option.name, *value);
    }
  }
}

int Analyze(const AnalyzeOptions& options, const CommandContext& context) {
  absl::StatusOr<ResolvedOutput> resolved = ResolveOutput(options.output);
  if (!resolved.ok()) return FailWith(resolved.status());
  std::vector<std::string> stderr_lines;
  if (!options.stderr_path.empty()) {
    absl::StatusOr<std::string> text = ReadInputFile(options.stderr_path, kStderrInput);
    if (!text.ok()) return FailWith(text.status());
    stderr_lines = absl::StrSplit(*text, '\n');
  }
  Report report = NewReport("analyze", context);
  if (absl::Status s = AnalyzeTraceFilesInto(options.traces, options.stderr_path.empty() ? nullptr : &stderr_lines,
                                             options.iteration, &*resolved, &report);
      !s.ok()) {
    return FailWith(s);
  }
  return EmitReport(report, *resolved);
}

}  // namespace

void AddIterationFlags(CLI::App* command, IterationFlags* flags) {
  command->add_option("--region", flags->region,
                      "NVTX range that marks one step of the region to graph (default: steps found by repetition)");
  command->add_option("--step-range", flags->step_range,
                      "Steps to analyze, FIRST:LAST (0-based, LAST excluded; default 1: skips the first)");
}

absl::Status AnalyzeTraceFilesInto(const std::vector<std::string>& paths, const std::vector<std::string>* stderr_lines,
                                   const IterationFlags& flags, ResolvedOutput* resolved, Report* report) {
  if (!flags.step_range.empty()) {
    analyzers::IterationOptions unused;
    if (absl::Status s = analyzers::ParseStepRange(flags.step_range, &unused); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("--step-range: ", s.message()));
    }
  }
  ApplyIterationFlags(flags, &resolved->check_options);
  const auto start = std::chrono::steady_clock::now();
  // Every trace is read before any analysis, so a bad path fails at once and no partial report is written.
  std::vector<trace::Trace> traces;
  for (const std::string& path : paths) {
    ShowProgress(absl::StrCat("reading trace ", traces.size() + 1, "/", paths.size(), ": ", path));
    absl::StatusOr<trace::Trace> trace = trace::ReadTrace(path);
    if (!trace.ok()) return absl::InvalidArgumentError(absl::StrCat(path, ": ", trace.status().message()));
    // Damage the reader stepped over is not a finding about the program: it goes to stderr and the step's message.
    if (!trace->read_warnings.empty()) EndProgress();
    for (const std::string& warning : trace->read_warnings) {
      std::fprintf(stderr, "graphcheck: warning: %s: %s\n", path.c_str(), warning.c_str());
    }
    if (!report->machine.gpu && !trace->devices.empty()) report->machine.gpu = trace->devices.front().gpu;
    traces.push_back(*std::move(trace));
  }
  std::vector<const trace::Trace*> pointers;
  size_t warnings = 0;
  for (const trace::Trace& trace : traces) {
    pointers.push_back(&trace);
    warnings += trace.read_warnings.size();
  }
  analyzers::IterationOptions selected;
  selected.region = flags.region;
  if (!flags.step_range.empty()) analyzers::ParseStepRange(flags.step_range, &selected).IgnoreError();  // checked above
  if (absl::Status s = analyzers::CheckStepSelection(pointers, selected, !flags.step_range.empty()); !s.ok()) {
    return s;
  }
  ShowProgress(absl::StrCat("analyzing ", traces.size(), " trace(s)"));
  analyzers::AnalysisResult result =
      analyzers::AnalyzeTraces(pointers, stderr_lines, BuiltinChecks(), resolved->selection, resolved->check_options);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  report->steps.push_back(
      Step{"analyze", StepStatus::kOk, ms,
           absl::StrCat(traces.size(), " trace(s)", warnings ? absl::StrCat(", ", warnings, " read warning(s)") : "")});
  AddChecksRun(std::move(result.checks_run), report);
  for (Finding& finding : result.findings) report->findings.push_back(std::move(finding));
  report->metrics.insert(report->metrics.end(), result.metrics.begin(), result.metrics.end());
  report->timeline = std::move(result.timeline);
  return absl::OkStatus();
}

void AddAnalyzeCommand(CLI::App* app, CommandContext* context) {
  auto options = std::make_shared<AnalyzeOptions>();
  CLI::App* command = app->add_subcommand("analyze", "Analyze trace files recorded by graphcheck run");
  command->add_option("TRACE", options->traces, "Trace files (one per process)")->required();
  AddIterationFlags(command, &options->iteration);
  command->add_option("--stderr", options->stderr_path,
                      "The program's stderr, saved to a file: known error messages map to checks");
  AddOutputOptions(command, &options->output);
  command->callback([options, context] { context->exit_code = Analyze(*options, *context); });
}

}  // namespace graphcheck
