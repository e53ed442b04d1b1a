// Running a program under the recorder, shared by `graphcheck run` (any program) and `graphcheck check` (the engine):
// the recorder library next to graphcheck, a usable GPU driver, the trace folder, the injection environment.
#ifndef GRAPHCHECK_CLI_RECORDED_PROGRAM_H_
#define GRAPHCHECK_CLI_RECORDED_PROGRAM_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cli/program_runner.h"
#include "trace/events.h"
#include "trace/launch_sampling.h"

namespace graphcheck {

struct RecordingOptions {
  std::string trace_dir;       // kept when given; else a temporary folder, removed by ~RecordedProgram
  std::string inject_library;  // default: libgraphcheck_inject.so next to graphcheck
  bool no_activity = false;
  // Python programs get graphcheck's probe (the probe/ folder next to graphcheck, first on PYTHONPATH).
  bool python_probe = false;
  // The probe compares each module graphed by make_graphed_callables with its eager forward on its first N calls
  // (--shadow); 0: never.
  int shadow_calls = 0;
  uint32_t module_calls = 0;  // --plan: the outermost module calls the probe records; 0 off
  // The recorder ends a process whose thread waits longer than this in a synchronizing CUDA call (--hang-timeout);
  // 0: no bound.
  double hang_timeout_s = 0;
  trace::LaunchRecording launches = trace::LaunchRecording::kSampled;
  trace::SamplingSchedule sampling;
  std::string step_range;  // the NVTX step range (--region), which closes the first sampling window after a few steps
};

// The folder of the running graphcheck executable (where the recorder and the engine are built).
std::string ExecutableDir();

// FailedPrecondition (exit 3) when there is no driver or it sees no GPU.
absl::Status CheckGpuDriver();

class RecordedProgram {
 public:
  // FailedPrecondition when the recorder library or the driver is missing; InvalidArgument when the trace folder
  // cannot be made; the command's own start failure as RunProgram reports it.
  static absl::StatusOr<RecordedProgram> Run(const std::vector<std::string>& command, RecordingOptions options);
  RecordedProgram(RecordedProgram&& other) noexcept;
  RecordedProgram& operator=(RecordedProgram&&) = delete;
  ~RecordedProgram();

  const ProgramResult& result() const { return result_; }
  ProgramResult& result() { return result_; }
  const std::string& trace_dir() const { return trace_dir_; }
  std::vector<std::string> TraceFiles() const;  // sorted

 private:
  RecordedProgram() = default;

  ProgramResult result_;
  std::string trace_dir_;
  bool remove_trace_dir_ = false;
};

}  // namespace graphcheck

#endif  // GRAPHCHECK_CLI_RECORDED_PROGRAM_H_
