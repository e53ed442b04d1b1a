#include "cli/run_command.h"

#include <dlfcn.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <memory>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "cli/analyze_command.h"
#include "cli/program_runner.h"
#include "core/exit_code.h"

namespace graphcheck {
namespace {

struct RunOptions {
  std::vector<std::string> command;
  std::string trace_dir;  // kept when given
  std::string inject_library;
  bool no_activity = false;
  bool capture_only = false;
  IterationFlags iteration;
  OutputOptions output;
};

std::string ExecutableDir() {
  char path[PATH_MAX] = {0};
  const ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
  return n > 0 ? std::filesystem::path(std::string(path, n)).parent_path().string() : ".";
}

// The directory of a library the dynamic loader can find, by loading it.
std::string LoadedLibraryPath(const char* soname, const char* symbol) {
  void* handle = dlopen(soname, RTLD_LAZY | RTLD_LOCAL);
  if (handle == nullptr) return "";
  std::string path;
  Dl_info info;
  if (void* address = dlsym(handle, symbol); address != nullptr && dladdr(address, &info) != 0) {
    path = info.dli_fname;
  }
  dlclose(handle);
  return path;
}

// The driver must be present and see a device, or nothing can be recorded: exit 3 with a clear message.
absl::Status CheckDriver() {
  void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (driver == nullptr) {
    return absl::FailedPreconditionError(
        "no NVIDIA driver on this machine (libcuda.so.1 not found): graphcheck run needs a GPU; "
        "use graphcheck analyze on traces recorded elsewhere, or graphcheck lint");
  }
  using InitFn = int (*)(unsigned);
  using CountFn = int (*)(int*);
  auto init = reinterpret_cast<InitFn>(dlsym(driver, "cuInit"));
  auto count = reinterpret_cast<CountFn>(dlsym(driver, "cuDeviceGetCount"));
  int devices = 0;
  const bool ok = init != nullptr && count != nullptr && init(0) == 0 && count(&devices) == 0 && devices > 0;
  // The driver stays loaded: unloading it after cuInit is not supported.
  if (!ok) return absl::FailedPreconditionError("the NVIDIA driver reports no usable GPU: graphcheck run needs one");
  return absl::OkStatus();
}

std::vector<std::string> TraceFiles(const std::string& dir) {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".gctrace") files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

int Run(RunOptions& options, const CommandContext& context) {
  absl::StatusOr<ResolvedOutput> resolved = ResolveOutput(options.output);
  if (!resolved.ok()) return FailWith(resolved.status());
  if (options.command.empty()) {
    return FailWith(absl::InvalidArgumentError("no program given: graphcheck run [options] -- CMD ARGS..."));
  }
  if (options.inject_library.empty()) options.inject_library = ExecutableDir() + "/libgraphcheck_inject.so";
  if (access(options.inject_library.c_str(), R_OK) != 0) {
    return FailWith(absl::FailedPreconditionError(
        absl::StrCat("recorder library not found at ", options.inject_library, " (build it, or pass --inject)")));
  }
  if (absl::Status s = CheckDriver(); !s.ok()) return FailWith(s);

  const bool keep_traces = !options.trace_dir.empty();
  if (!keep_traces) {
    char temp[] = "/tmp/graphcheck-run-XXXXXX";
    if (mkdtemp(temp) == nullptr) return FailWith(absl::InternalError("cannot create a temporary trace folder"));
    options.trace_dir = temp;
  } else if (mkdir(options.trace_dir.c_str(), 0755) != 0 && errno != EEXIST) {
    return FailWith(absl::InvalidArgumentError(absl::StrCat("cannot create --trace-dir ", options.trace_dir)));
  }
  std::map<std::string, std::string> environment = {
      {"CUDA_INJECTION64_PATH", options.inject_library},
      {"GRAPHCHECK_TRACE_DIR", std::filesystem::absolute(options.trace_dir).string()},
  };
  if (options.no_activity || options.capture_only) environment["GRAPHCHECK_ACTIVITY"] = "0";
  if (options.capture_only) environment["GRAPHCHECK_LAUNCHES"] = "capture";
  if (const std::string cupti = LoadedLibraryPath("libcupti.so.13", "cuptiSubscribe"); !cupti.empty()) {
    environment["NVTX_INJECTION64_PATH"] = cupti;  // NVTX forwards ranges to CUPTI, which hands them to us
  }

  absl::StatusOr<ProgramResult> program = RunProgram(options.command, environment);
  if (!program.ok()) return FailWith(program.status());

  Report report = NewReport("run", context);
  report.steps.push_back(Step{"program",
                              program->signal == 0 && program->exit_code == 0 ? StepStatus::kOk : StepStatus::kFailed,
                              program->wall_ms, DescribeProgramResult(*program)});
  report.metrics.push_back(
      Metric{"program.exit_code", static_cast<double>(program->exit_code), "code", "the program's own exit status"});
  report.metrics.push_back(Metric{"program.signal", static_cast<double>(program->signal), "signal",
                                  "the signal that ended the program, 0 if none"});
  const std::vector<std::string> traces = TraceFiles(options.trace_dir);
  if (absl::Status s = AnalyzeTraceFilesInto(traces, &program->stderr_lines, options.iteration, &*resolved, &report);
      !s.ok()) {
    return FailWith(s);
  }
  if (!keep_traces) std::filesystem::remove_all(options.trace_dir);
  return EmitReport(report, *resolved);
}

}  // namespace

void AddRunCommand(CLI::App* app, CommandContext* context) {
  auto options = std::make_shared<RunOptions>();
  CLI::App* command = app->add_subcommand("run", "Run a CUDA program with the recorder injected and analyze it");
  command->add_option("--trace-dir", options->trace_dir, "Keep the traces (one per process) in DIR");
  command->add_option("--inject", options->inject_library, "Recorder library (default: next to graphcheck)");
  command->add_flag("--no-activity", options->no_activity,
                    "Record API calls only, no GPU timings: lower overhead, no launch-overhead metrics");
  command->add_flag("--capture-only", options->capture_only,
                    "Record launches only inside captures, and no GPU timings: the lowest overhead, for capture "
                    "diagnosis (synchronizations, allocations and failures are still recorded everywhere)");
  AddIterationFlags(command, &options->iteration);
  AddOutputOptions(command, &options->output);
  command->add_option("CMD", options->command, "The program and its arguments, after --")->expected(-1);
  command->callback([options, context] { context->exit_code = Run(*options, *context); });
}

}  // namespace graphcheck
