#include "cli/run_command.h"

#include <algorithm>
#include <memory>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "cli/analyze_command.h"
#include "cli/progress.h"
#include "cli/recorded_program.h"
#include "core/exit_code.h"
#include "core/metrics.h"

namespace graphcheck {
namespace {

// The outermost module calls `--plan` records: enough for the shape distribution of a long serving run.
constexpr uint32_t kPlanModuleCalls = 100000;

// The command line as CLI11 parses it: what needs no conversion goes straight into `recording`, the rest is spelled as
// the user wrote it until RecordingFrom converts it, once.
struct RunOptions {
  std::vector<std::string> command;
  RecordingOptions recording;  // --trace-dir, --inject, --shadow
  bool no_activity = false;
  bool no_python_probe = false;
  bool plan = false;
  double hang_timeout_s = 0;
  bool capture_only = false;
  std::string launches = "sampled";
  std::string sampling = trace::SamplingSchedule().ToString();
  IterationFlags iteration;
  OutputOptions output;
};

// How the program is recorded: the run settings, each in its own type (the timeout a duration), filled once here.
absl::StatusOr<RecordingOptions> RecordingFrom(const RunOptions& options) {
  RecordingOptions recording = options.recording;
  recording.python_probe = !options.no_python_probe;
  trace::RunSettings& settings = recording.settings;
  settings.record_activity = !options.no_activity;
  if (absl::Status s =
          trace::ParseLaunchRecording(options.capture_only ? "capture" : options.launches, &settings.launches);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = trace::ParseSamplingSchedule(options.sampling, &settings.sampling); !s.ok()) return s;
  settings.step_range = options.iteration.region;
  // Rounded up to the environment's whole milliseconds, so that a bound never becomes none.
  settings.hang_timeout = absl::Ceil(absl::Seconds(options.hang_timeout_s), absl::Milliseconds(1));
  settings.module_calls = options.plan ? kPlanModuleCalls : 0;
  return recording;
}

// The file the run is about: the first script argument of an interpreter ("train.py" of `python3 train.py`), else
// the program itself.
std::string ProgramFile(const std::vector<std::string>& command) {
  auto script =
      std::find_if(command.begin(), command.end(), [](const std::string& arg) { return absl::EndsWith(arg, ".py"); });
  return script != command.end() ? *script : command.front();
}

int Run(RunOptions& options, const CommandContext& context) {
  absl::StatusOr<CommandSettings> settings = ResolveSettings(options.output);
  if (!settings.ok()) return FailWith(settings.status());
  if (options.command.empty()) {
    return FailWith(absl::InvalidArgumentError("no program given: graphcheck run [options] -- CMD ARGS..."));
  }
  absl::StatusOr<RecordingOptions> recording = RecordingFrom(options);
  if (!recording.ok()) return FailWith(recording.status());
  ShowProgress(absl::StrCat("running ", absl::StrJoin(options.command, " ")));
  absl::StatusOr<RecordedProgram> recorded = RecordedProgram::Run(options.command, *std::move(recording));
  if (!recorded.ok()) return FailWith(recorded.status());
  ProgramResult* program = &recorded->result();

  Report report = NewReport("run", context);
  report.subject = ProgramFile(options.command);
  report.steps.push_back(Step{"program",
                              program->signal == 0 && program->exit_code == 0 ? StepStatus::kOk : StepStatus::kFailed,
                              program->wall_ms, DescribeProgramResult(*program)});
  report.metrics.push_back(metric::kProgramExitCode.With(static_cast<double>(program->exit_code)));
  report.metrics.push_back(metric::kProgramSignal.With(static_cast<double>(program->signal)));
  if (absl::Status s = AnalyzeTraceFilesInto(recorded->TraceFiles(), &program->stderr_lines, options.iteration,
                                             settings->checks, &report);
      !s.ok()) {
    return FailWith(s);
  }
  return EmitReport(report, settings->output);
}

}  // namespace

void AddRunCommand(CLI::App* app, CommandContext* context) {
  auto options = std::make_shared<RunOptions>();
  CLI::App* command = app->add_subcommand("run", "Run a CUDA program with the recorder injected and analyze it");
  command->add_option("--trace-dir", options->recording.settings.trace_dir, "Keep the traces (one per process) in DIR");
  command->add_option("--inject", options->recording.inject_library, "Recorder library (default: next to graphcheck)");
  command->add_flag("--no-activity", options->no_activity,
                    "Record API calls only, no GPU timings: lower overhead, no launch-overhead metrics");
  command
      ->add_option("--launches", options->launches,
                   "Kernel launches recorded outside captures: 'sampled' (default: whole launches and GPU times "
                   "in sampling windows, see --sampling), 'all' (every launch: launch-bound steps 22-37% slower on "
                   "H100s, 20-30% on H200s, CUPTI's own cost), "
                   "'capture' (none, and no GPU times; launches inside captures are always recorded)")
      ->capture_default_str();
  command
      ->add_option("--sampling", options->sampling,
                   "Sampling windows, FIRST_LAUNCHES:WINDOW_MS:PERIOD_MS[:FIRST_STEPS]: every launch until "
                   "FIRST_LAUNCHES were recorded or FIRST_STEPS steps (NVTX ranges: --region, else the program's "
                   "top-level ranges) completed, then WINDOW_MS out of every PERIOD_MS (0:0, the default: no later "
                   "windows; later windows leave launch-bound programs ~10% slower for the rest of the run). The "
                   "unrecorded steps give the step time the forecast uses")
      ->capture_default_str();
  command->add_flag("--no-python-probe", options->no_python_probe,
                    "Do not load graphcheck's probe into Python programs (it records capture contexts and their "
                    "exceptions, replays and torch.compile's CUDA-graph decisions; without it the CUDA calls are "
                    "still recorded)");
  command
      ->add_option("--shadow", options->recording.settings.shadow_calls,
                   "Compare each module graphed by make_graphed_callables with its own eager forward on its first N "
                   "calls (the eager forward runs twice on the same input, random state and buffers restored; each "
                   "compared call costs about two eager forwards): numerics-forward in a running program. 0 (the "
                   "default): off")
      ->check(CLI::Range(0, 1000));
  command->add_flag("--plan", options->plan,
                    "Record what `graphcheck plan` needs: each of the program's outermost module calls with its "
                    "input shapes (the first 100000; a few Python calls per outermost call)");
  command
      ->add_option("--hang-timeout", options->hang_timeout_s,
                   "SECONDS: a process whose thread waits longer than this in a CUDA synchronize (a collective "
                   "inside a replayed graph that never completes) is ended with exit status 124, and the report says "
                   "where each process waited (check hang). 0 (the default): no bound")
      ->check(CLI::Range(0.0, 86400.0));
  command->add_flag("--capture-only", options->capture_only,
                    "Same as --launches capture: the lowest overhead, for capture diagnosis (synchronizations, "
                    "allocations and failures are still recorded everywhere)");
  AddIterationFlags(command, &options->iteration);
  AddOutputOptions(command, &options->output);
  command->add_option("CMD", options->command, "The program and its arguments, after --")->expected(-1);
  command->callback([options, context] { context->exit_code = Run(*options, *context); });
}

}  // namespace graphcheck
