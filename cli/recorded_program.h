// Running a program under the recorder, shared by `graphcheck run` (any program) and `graphcheck check` (the engine):
// the recorder library next to graphcheck, a usable GPU driver, the trace folder, the injection environment.
#ifndef GRAPHCHECK_CLI_RECORDED_PROGRAM_H_
#define GRAPHCHECK_CLI_RECORDED_PROGRAM_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cli/program_runner.h"
#include "trace/run_settings.h"

namespace graphcheck {

// How a program runs under the recorder: the settings it is handed (trace/run_settings.h, the one record the command
// fills), and what goes around them.
struct RecordingOptions {
  // settings.trace_dir is kept when given; else the traces go to a temporary folder, removed by ~RecordedProgram.
  trace::RunSettings settings;
  std::string inject_library;  // default: libgraphcheck_inject.so next to graphcheck
  // Python programs get graphcheck's probe (the probe/ folder next to graphcheck, first on PYTHONPATH), which
  // settings.shadow_calls and settings.module_calls need.
  bool python_probe = false;
};

// The folder of the running graphcheck executable (where the recorder and the engine are built).
std::string ExecutableDir();

// FailedPrecondition (exit 3) when there is no driver or it sees no GPU.
absl::Status CheckGpuDriver();

class RecordedProgram {
 public:
  // InvalidArgument when the settings need the Python probe and it is off, or when the trace folder cannot be made;
  // FailedPrecondition when the recorder library or the driver is missing; the command's own start failure as
  // RunProgram reports it.
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
