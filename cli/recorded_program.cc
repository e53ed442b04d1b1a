#include "cli/recorded_program.h"

#include <dlfcn.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <map>

#include "absl/strings/str_cat.h"
#include "trace/run_settings.h"

namespace graphcheck {
namespace {

// The path of a library the dynamic loader can find, by loading it.
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

}  // namespace

std::string ExecutableDir() {
  char path[PATH_MAX] = {0};
  const ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
  return n > 0 ? std::filesystem::path(std::string(path, n)).parent_path().string() : ".";
}

absl::Status CheckGpuDriver() {
  void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (driver == nullptr) {
    return absl::FailedPreconditionError(
        "no NVIDIA driver on this machine (libcuda.so.1 not found): recording needs a GPU; "
        "use graphcheck analyze on traces recorded elsewhere, or graphcheck lint");
  }
  using InitFn = int (*)(unsigned);
  using CountFn = int (*)(int*);
  auto init = reinterpret_cast<InitFn>(dlsym(driver, "cuInit"));
  auto count = reinterpret_cast<CountFn>(dlsym(driver, "cuDeviceGetCount"));
  int devices = 0;
  const bool ok = init != nullptr && count != nullptr && init(0) == 0 && count(&devices) == 0 && devices > 0;
  // The driver stays loaded: unloading it after cuInit is not supported.
  if (!ok) return absl::FailedPreconditionError("the NVIDIA driver reports no usable GPU: recording needs one");
  return absl::OkStatus();
}

absl::StatusOr<RecordedProgram> RecordedProgram::Run(const std::vector<std::string>& command,
                                                     RecordingOptions options) {
  // Usage errors first, before what the machine lacks.
  if (!options.python_probe && options.settings.shadow_calls > 0) {
    return absl::InvalidArgumentError("--shadow needs the Python probe: drop --no-python-probe");
  }
  if (!options.python_probe && options.settings.module_calls > 0) {
    return absl::InvalidArgumentError("--plan needs the Python probe: drop --no-python-probe");
  }
  if (options.inject_library.empty()) options.inject_library = ExecutableDir() + "/libgraphcheck_inject.so";
  if (access(options.inject_library.c_str(), R_OK) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("recorder library not found at ", options.inject_library, " (build it, or pass --inject)"));
  }
  if (absl::Status s = CheckGpuDriver(); !s.ok()) return s;

  RecordedProgram program;
  trace::RunSettings& settings = options.settings;
  if (settings.trace_dir.empty()) {
    char temp[] = "/tmp/graphcheck-run-XXXXXX";
    if (mkdtemp(temp) == nullptr) return absl::InternalError("cannot create a temporary trace folder");
    program.trace_dir_ = temp;
    program.remove_trace_dir_ = true;
  } else if (std::error_code error; !std::filesystem::create_directories(settings.trace_dir, error) && error) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot create --trace-dir ", settings.trace_dir, ": ", error.message()));
  } else {
    program.trace_dir_ = settings.trace_dir;
  }
  // The program and the processes it starts may change their working directory.
  settings.trace_dir = std::filesystem::absolute(program.trace_dir_).string();
  std::map<std::string, std::string> environment = trace::RunSettingsEnvironment(settings);
  environment["CUDA_INJECTION64_PATH"] = options.inject_library;
  if (options.python_probe) {
    // Its sitecustomize starts the probe, then runs the program's own sitecustomize (the next one on the path).
    const std::string probe = ExecutableDir() + "/probe";
    const char* path = std::getenv("PYTHONPATH");
    environment["PYTHONPATH"] = path != nullptr && *path != '\0' ? absl::StrCat(probe, ":", path) : probe;
  }
  if (const std::string cupti = LoadedLibraryPath("libcupti.so.13", "cuptiSubscribe"); !cupti.empty()) {
    environment["NVTX_INJECTION64_PATH"] = cupti;  // NVTX forwards ranges to CUPTI, which hands them to us
  }
  absl::StatusOr<ProgramResult> result = RunProgram(command, environment);
  if (!result.ok()) return result.status();
  program.result_ = *std::move(result);
  return program;
}

RecordedProgram::RecordedProgram(RecordedProgram&& other) noexcept
    : result_(std::move(other.result_)),
      trace_dir_(std::move(other.trace_dir_)),
      remove_trace_dir_(std::exchange(other.remove_trace_dir_, false)) {}

RecordedProgram::~RecordedProgram() {
  std::error_code ignored;
  if (remove_trace_dir_) std::filesystem::remove_all(trace_dir_, ignored);
}

std::vector<std::string> RecordedProgram::TraceFiles() const {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(trace_dir_)) {
    if (entry.path().extension() == ".gctrace") files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace graphcheck
