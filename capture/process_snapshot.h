// What the recorder writes about the process itself: who it is (pid, rank, command line), the environment variables
// that matter to capture, its devices, and where its trace goes.
#ifndef GRAPHCHECK_CAPTURE_PROCESS_SNAPSHOT_H_
#define GRAPHCHECK_CAPTURE_PROCESS_SNAPSHOT_H_

#include <cuda.h>

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "core/environment.h"
#include "trace/events.h"

namespace graphcheck::capture {

// This process: pid, the given parent, RANK / LOCAL_RANK / WORLD_SIZE, start time on CUPTI's clock, host, argv.
trace::ProcessInfo CurrentProcess(uint32_t parent_pid);

// The variables of this process that change what capture does or how it fails (PYTORCH_*, NCCL_*, CUDA_*, ...).
Environment CaptureEnvironment();

// DIR/trace-HOST-PID.gctrace.
std::string TracePath(const std::string& dir);

// The device of `context`: index, name, compute capability, driver version.
absl::StatusOr<trace::DeviceInfo> DeviceOfContext(CUcontext context);

}  // namespace graphcheck::capture

#endif  // GRAPHCHECK_CAPTURE_PROCESS_SNAPSHOT_H_
