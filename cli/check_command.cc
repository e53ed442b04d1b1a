#include "cli/check_command.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analysis/capture_windows.h"
#include "analysis/launch_metrics.h"
#include "cli/analyze_command.h"
#include "cli/program_runner.h"
#include "cli/progress.h"
#include "cli/recorded_program.h"
#include "core/check_ids.h"
#include "core/exit_code.h"
#include "core/file_io.h"
#include "core/metrics.h"
#include "core/model_spec.h"
#include "core/plural.h"
#include "engine/run/engine_run.h"
#include "engine/run/engine_run_json.h"
#include "report/output.h"

namespace graphcheck {
namespace {

// The NVTX range the engine puts around every timed step (engine/pipeline.h).
constexpr char kEngineStepRange[] = "graphcheck:step";

struct CheckCommandOptions {
  std::string model;
  std::vector<std::string> inputs;
  std::string inputs_file;
  bool eval = false;
  std::string optimizer = "sgd";
  std::string scope = "callables";
  std::string amp;
  int warmup = 3;
  int replays = 20;
  uint64_t seed = 0;
  std::string numerics = "deterministic";
  std::string vary;
  std::string trace_dir;
  std::string inject_library;
  std::string engine;
  IterationFlags iteration;
  OutputOptions output;
};

// The engine's command line for these options; validates what can be validated without LibTorch.
absl::StatusOr<std::vector<std::string>> EngineCommand(const CheckCommandOptions& options,
                                                       const std::string& result_path) {
  if (absl::StatusOr<ModelRef> ref = ResolveModelRef(options.model); !ref.ok()) return ref.status();
  std::vector<std::string> command = {options.engine.empty() ? ExecutableDir() + "/graphcheck-engine" : options.engine,
                                      options.model};
  for (const std::string& input : options.inputs) {
    if (absl::StatusOr<InputSpec> spec = ParseInputSpec(input); !spec.ok()) return spec.status();
    command.insert(command.end(), {"--input", input});
  }
  if (!options.inputs_file.empty()) {
    if (access(options.inputs_file.c_str(), R_OK) != 0) {
      return absl::InvalidArgumentError(absl::StrCat("cannot read --inputs file '", options.inputs_file, "'"));
    }
    command.insert(command.end(), {"--inputs", options.inputs_file});
  }
  if (options.warmup < 0 || options.replays < 1) {
    return absl::InvalidArgumentError("--warmup must be >= 0 and --replays >= 1");
  }
  if (options.eval) command.push_back("--eval");
  if (options.eval && options.scope == "full-iteration") {
    return absl::InvalidArgumentError("--scope full-iteration graphs a training iteration: it cannot go with --eval");
  }
  command.insert(command.end(), {"--optimizer", options.optimizer, "--scope", options.scope, "--warmup",
                                 absl::StrCat(options.warmup), "--replays", absl::StrCat(options.replays), "--seed",
                                 absl::StrCat(options.seed), "--numerics", options.numerics, "--result", result_path});
  if (!options.amp.empty()) command.insert(command.end(), {"--amp", options.amp});
  if (!options.vary.empty()) {
    if (absl::StatusOr<VariedDimension> varied = ParseVariedDimension(options.vary); !varied.ok()) {
      return varied.status();
    }
    if (options.scope == "full-iteration") {
      return absl::InvalidArgumentError(
          "--vary captures the forward and backward per size: it needs --scope callables");
    }
    command.insert(command.end(), {"--vary", options.vary});
  }
  return command;
}

absl::StatusOr<EngineRun> ReadEngineRun(const std::string& path) {
  absl::StatusOr<std::string> text = ReadInputFile(path, kEngineResultInput);
  if (!text.ok())
    return absl::InternalError(absl::StrCat("the engine's result is unreadable: ", text.status().message()));
  absl::StatusOr<EngineRun> run = EngineRunFromJson(*text);
  if (!run.ok())
    return absl::InternalError(absl::StrCat("the engine's result is unreadable: ", run.status().message()));
  return run;
}

// Appends to each step's message the checks whose findings happened inside it (its NVTX range).
void AttributeFindingsToSteps(Report* report) {
  for (Step& step : report->steps) {
    const std::string range = absl::StrCat("graphcheck:", step.name);
    std::vector<std::string> ids;
    for (const Finding& finding : report->findings) {
      if (finding.where.nvtx_path.find(range) == std::string::npos) continue;
      if (std::find(ids.begin(), ids.end(), finding.check_id) == ids.end()) ids.push_back(finding.check_id);
    }
    if (ids.empty()) continue;
    step.message = absl::StrCat(step.message, step.message.empty() ? "" : "; ", "findings: ", absl::StrJoin(ids, ", "));
  }
}

// A temporary file for an engine's result, removed with the object.
class EngineResultFile {
 public:
  EngineResultFile() {
    const int fd = mkstemp(path_);
    created_ = fd >= 0;
    if (created_) close(fd);
  }
  ~EngineResultFile() {
    if (created_) unlink(path_);
  }
  EngineResultFile(const EngineResultFile&) = delete;
  EngineResultFile& operator=(const EngineResultFile&) = delete;

  bool created() const { return created_; }
  const char* path() const { return path_; }

 private:
  char path_[32] = "/tmp/graphcheck-engine-XXXXXX";
  bool created_ = false;
};

// The engine again, without the recorder and with --timing-only, for step times that recording did not lengthen.
// Its outcome is the step "timing-run"; without times the recorded run's stay (their descriptions say so).
void RunUnrecordedTiming(const CheckCommandOptions& options, Report* report) {
  Step step{"timing-run", StepStatus::kOk, 0, "eager and graphed steps timed without the recorder"};
  const EngineResultFile result;
  absl::StatusOr<std::vector<std::string>> command = EngineCommand(options, result.path());
  absl::StatusOr<ProgramResult> ran = absl::InternalError("cannot create a temporary file for the engine's result");
  if (result.created() && command.ok()) {
    command->push_back("--timing-only");
    ran = RunProgram(*command, {});
  }
  absl::StatusOr<EngineRun> timing = absl::InternalError("");
  if (ran.ok()) {
    step.duration_ms = ran->wall_ms;
    if (ran->signal == 0 && ran->exit_code == 0) timing = ReadEngineRun(result.path());
  }
  const bool timed = timing.ok() && metric::FindIn(timing->metrics, metric::kCheckGraphedStepUs.name) != nullptr;
  if (timed) {
    UseUnrecordedTimes(timing->metrics, &report->metrics);
  } else {
    step.status = StepStatus::kSkipped;
    step.message = !ran.ok() ? std::string(ran.status().message())
                   : !timing.ok()
                       ? DescribeProgramResult(*ran)
                       : "the run without the recorder timed no graphed step; the times are the recorded run's";
  }
  report->steps.push_back(std::move(step));
}

// The report of a machine where the engine cannot run: the static checks, and why the rest did not.
int EmitWithoutGpu(const absl::Status& driver, const CommandSettings& settings, Report* report) {
  report->steps.push_back(Step{"engine", StepStatus::kSkipped, 0, std::string(driver.message())});
  report->incomplete =
      Incomplete{kExitEnvironmentMissing,
                 absl::StrCat("only the static checks ran; the model needs a GPU to be checked: ", driver.message())};
  return EmitReport(*report, settings.output);
}

// The engine under the recorder, recording every launch: the pipeline is short and its kernels-per-step metric
// counts the launches of every step.
absl::StatusOr<RecordedProgram> RecordEngine(const CheckCommandOptions& options,
                                             const std::vector<std::string>& command) {
  RecordingOptions recording;
  recording.settings.trace_dir = options.trace_dir;
  recording.settings.launches = trace::LaunchRecording::kAll;
  recording.inject_library = options.inject_library;
  ShowProgress(absl::StrCat("checking ", options.model, ": eager reference, warmup, capture, ",
                            Plural(options.replays, "replay", "replays")));
  return RecordedProgram::Run(command, recording);
}

// The engine's run merged into the report (GPU, steps, metrics, numerics) and the engine checks run over it; a
// crashed engine is its failed step instead. Returns the run when the engine finished.
absl::StatusOr<std::optional<EngineRun>> AddEngineRun(const ProgramResult& engine, const char* result_path,
                                                      const CheckSettings& checks, Report* report) {
  if (engine.signal != 0 || engine.exit_code != 0) {
    // A crash is a result too: the trace says what ran up to it.
    report->steps.push_back(Step{"engine", StepStatus::kFailed, engine.wall_ms, DescribeProgramResult(engine)});
    return std::nullopt;
  }
  absl::StatusOr<EngineRun> run = ReadEngineRun(result_path);
  if (!run.ok()) return run.status();
  if (run->gpu) report->machine.gpu = run->gpu;
  report->steps.insert(report->steps.end(), run->steps.begin(), run->steps.end());
  report->metrics.insert(report->metrics.end(), run->metrics.begin(), run->metrics.end());
  report->numerics = run->samples;
  CheckInputs engine_inputs;
  engine_inputs.Add(*run);
  RunChecksInto(engine_inputs, checks, "validate", report);
  return std::optional<EngineRun>(*std::move(run));
}

// The checks over the engine's trace, steps cut by its "graphcheck:step" ranges, and each finding attributed to
// the pipeline step it happened in.
absl::Status AnalyzeEngineTrace(const CheckCommandOptions& options, const RecordedProgram& recorded,
                                const CheckSettings& checks, Report* report) {
  // A failure LibTorch diagnosed before any CUDA call (a pageable copy it refused) leaves nothing in the trace but
  // its message: the messages of failed steps join the engine's stderr for the known-message check.
  std::vector<std::string> messages = recorded.result().stderr_lines;
  for (const Step& step : report->steps) {
    if (step.status == StepStatus::kFailed) messages.push_back(step.message);
  }
  IterationFlags iteration = options.iteration;
  if (iteration.region.empty()) {
    iteration.region = kEngineStepRange;
    iteration.region_must_match = false;  // an engine that stopped before its first step has none
  }
  if (absl::Status s = AnalyzeTraceFilesInto(recorded.TraceFiles(), &messages, iteration, checks, report); !s.ok()) {
    return s;
  }
  AttributeFindingsToSteps(report);
  NoteWhatANamedCaptureFailureExplains(report);
  return absl::OkStatus();
}

// Where the time went: graphcheck's own work (static checks, starting the engine, reading and analyzing the trace,
// the report) is everything outside the engine process; inside it, what is not a pipeline step is starting LibTorch
// and CUDA and writing the result.
void AddTimeMetrics(double total_ms, const ProgramResult& engine, const std::optional<EngineRun>& run, Report* report) {
  double timing_run_ms = 0;
  for (const Step& step : report->steps) timing_run_ms += step.name == "timing-run" ? step.duration_ms : 0;
  report->metrics.push_back(metric::kCheckTotalMs.With(total_ms));
  report->metrics.push_back(metric::kCheckToolOverheadMs.With(total_ms - engine.wall_ms - timing_run_ms));
  if (run) {
    double engine_steps_ms = 0;
    for (const Step& step : run->steps) engine_steps_ms += step.duration_ms;
    report->metrics.push_back(metric::kCheckEngineStartupMs.With(engine.wall_ms - engine_steps_ms));
  }
}

int CheckModel(CheckCommandOptions& options, const CommandContext& context) {
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<CommandSettings> settings = ResolveSettings(options.output);
  if (!settings.ok()) return FailWith(settings.status());
  const EngineResultFile result;
  if (!result.created()) {
    return FailWith(absl::InternalError("cannot create a temporary file for the engine's result"));
  }
  absl::StatusOr<std::vector<std::string>> command = EngineCommand(options, result.path());
  if (!command.ok()) return FailWith(command.status());

  Report report = NewReport("check", context);
  report.subject = options.model;
  CheckInputs static_inputs;
  static_inputs.Add(Environment::FromCurrentProcess());
  RunChecksInto(static_inputs, settings->checks, "static-checks", &report);
  if (absl::Status driver = CheckGpuDriver(); !driver.ok()) return EmitWithoutGpu(driver, *settings, &report);
  if (access(command->front().c_str(), X_OK) != 0) {
    return FailWith(absl::FailedPreconditionError(
        absl::StrCat("the engine is not at ", command->front(), " (build the graphcheck-engine target, or --engine)")));
  }

  absl::StatusOr<RecordedProgram> recorded = RecordEngine(options, *command);
  if (!recorded.ok()) return FailWith(recorded.status());
  const ProgramResult& engine = recorded->result();
  // The engine said why on stderr in one line: bad input (2) or no usable GPU (3). No report then.
  if (engine.signal == 0 && (engine.exit_code == kExitBadInput || engine.exit_code == kExitEnvironmentMissing)) {
    return engine.exit_code;
  }
  absl::StatusOr<std::optional<EngineRun>> run = AddEngineRun(engine, result.path(), settings->checks, &report);
  if (!run.ok()) return FailWith(run.status());
  if (absl::Status s = AnalyzeEngineTrace(options, *recorded, settings->checks, &report); !s.ok()) return FailWith(s);
  // Only a run whose every step worked has graphs to time.
  const std::optional<EngineRun>& finished = *run;
  if (finished && std::all_of(finished->steps.begin(), finished->steps.end(),
                              [](const Step& s) { return s.status == StepStatus::kOk; })) {
    ShowProgress("timing eager and graphed steps without the recorder");
    RunUnrecordedTiming(options, &report);
  }
  analysis::UseEngineTimesForTheForecast(&report.metrics);
  AddTimeMetrics(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count(), engine,
                 finished, &report);
  return EmitReport(report, settings->output);
}

}  // namespace

void NoteWhatANamedCaptureFailureExplains(Report* report) {
  std::set<std::string> cause_checks;
  for (uint8_t c = 0; c < static_cast<uint8_t>(analysis::CaptureCause::kUnexplained); ++c) {
    cause_checks.insert(std::string(analysis::CauseCheckId(static_cast<analysis::CaptureCause>(c))));
  }
  const bool named = std::any_of(report->findings.begin(), report->findings.end(), [&](const Finding& f) {
    return f.severity == Severity::kError && cause_checks.count(f.check_id) != 0;
  });
  if (!named) return;
  for (Finding& finding : report->findings) {
    const bool capture_step_failed =
        finding.check_id == check_id::kPipelineStepFailed && absl::StrContains(finding.where.nvtx_path, "capture");
    if (capture_step_failed || finding.check_id == check_id::kSyncInRegion) finding.severity = Severity::kNote;
  }
}

void UseUnrecordedTimes(const std::vector<Metric>& unrecorded, std::vector<Metric>* metrics) {
  auto replaced = [](absl::string_view name) {
    return absl::StartsWith(name, metric::kCheckEagerStepUs.name) ||
           absl::StartsWith(name, metric::kCheckGraphedStepUs.name) || name == metric::kCheckSpeedup.name ||
           name == metric::kCheckEagerOutsideGraphableUs.name;
  };
  std::optional<Metric> recorded_eager;
  if (const Metric* eager = metric::FindIn(*metrics, metric::kCheckEagerStepUs.name)) recorded_eager = *eager;
  metrics->erase(std::remove_if(metrics->begin(), metrics->end(), [&](const Metric& m) { return replaced(m.name); }),
                 metrics->end());
  for (const Metric& m : unrecorded) {
    if (!replaced(m.name)) continue;
    Metric copy = m;
    if (absl::EndsWith(copy.name, "_step_us")) absl::StrAppend(&copy.description, ", run without the recorder");
    metrics->push_back(std::move(copy));
  }
  const Metric* eager = metric::FindIn(unrecorded, metric::kCheckEagerStepUs.name);
  if (recorded_eager && eager != nullptr && eager->value > 0) {
    metrics->push_back(metric::kCheckRecordedEagerStepUs.With(recorded_eager->value));
    metrics->push_back(metric::kCheckRecorderPerturbationRatio.With(recorded_eager->value / eager->value - 1));
  }
}

void AddCheckCommand(CLI::App* app, CommandContext* context) {
  auto options = std::make_shared<CheckCommandOptions>();
  CLI::App* command =
      app->add_subcommand("check", "Graph a model with MakeGraphedCallables under the recorder and validate each step");
  std::vector<std::string> builtins;
  for (const BuiltinModel& model : BuiltinModels()) builtins.push_back("builtin:" + model.name);
  command
      ->add_option("MODEL", options->model,
                   absl::StrCat("A TorchScript file (torch.jit.save) or one of: ", absl::StrJoin(builtins, ", ")))
      ->required();
  command->add_option("--input", options->inputs,
                      "An input tensor NAME:DIMxDIM...:DTYPE (repeatable; default for built-ins: their own)");
  command->add_option("--inputs", options->inputs_file, "Input tensors saved from Python with torch.save");
  command->add_flag("--eval,!--train", options->eval,
                    "--eval: forward only; --train (default): forward, backward and optimizer step, loss from the "
                    "first output");
  command->add_option("--optimizer", options->optimizer, "sgd or adam (fused, state on the GPU)")
      ->check(CLI::IsMember({"sgd", "adam"}));
  command
      ->add_option("--scope", options->scope,
                   "callables: make_graphed_callables (forward and backward graphs); full-iteration: forward, "
                   "backward and optimizer step in one graph")
      ->check(CLI::IsMember({"callables", "full-iteration"}));
  command->add_option("--amp", options->amp, "Autocast the forward: bf16 or fp16")
      ->check(CLI::IsMember({"bf16", "fp16"}));
  command->add_option("--warmup", options->warmup, "Warmup iterations before capture (default 3; 11 for DDP)");
  command->add_option("--replays", options->replays, "Timed steps, eager and graphed each (default 20)");
  command->add_option("--seed", options->seed, "Seed for parameters, inputs and dropout");
  command->add_option("--vary", options->vary,
                      "NAME:DIM=SIZE,SIZE,...: input NAME's dimension DIM varies; capture graphs for each size "
                      "(dynamic-shape names the input and what each size costs)");
  command
      ->add_option("--numerics", options->numerics,
                   "deterministic (default): cuDNN deterministic, benchmark and TF32 off, so graphed is held to "
                   "bitwise equality where eager reproduces itself; native: LibTorch's default kernels, compared "
                   "against eager's own run-to-run spread")
      ->check(CLI::IsMember({"deterministic", "native"}));
  command->add_option("--trace-dir", options->trace_dir, "Keep the engine's trace in DIR");
  command->add_option("--inject", options->inject_library, "Recorder library (default: next to graphcheck)");
  command->add_option("--engine", options->engine, "The engine (default: graphcheck-engine next to graphcheck)");
  AddIterationFlags(command, &options->iteration);
  AddOutputOptions(command, &options->output);
  command->callback([options, context] { context->exit_code = CheckModel(*options, *context); });
}

}  // namespace graphcheck
