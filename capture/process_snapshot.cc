// The process snapshot (process_snapshot.h).
#include "capture/process_snapshot.h"

#include <cupti.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iterator>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace graphcheck::capture {
namespace {

// Variables that change what capture does or how it fails; recorded with the trace for the environment checks.
bool MattersToCapture(absl::string_view name) {
  for (absl::string_view prefix : {"PYTORCH_", "TORCH_", "NCCL_", "CUDA_", "CUBLAS", "CUDNN", "NVTE_", "MASTER_"}) {
    if (absl::StartsWith(name, prefix)) return true;
  }
  return name == "RANK" || name == "LOCAL_RANK" || name == "WORLD_SIZE" || name == "LOCAL_WORLD_SIZE";
}

int32_t IntFromEnv(const char* name) {
  int32_t value = -1;
  const char* text = std::getenv(name);
  return text != nullptr && absl::SimpleAtoi(text, &value) ? value : -1;
}

}  // namespace

trace::ProcessInfo CurrentProcess(uint32_t parent_pid) {
  trace::ProcessInfo process;
  process.pid = static_cast<uint32_t>(getpid());
  process.parent_pid = parent_pid;
  process.rank = IntFromEnv("RANK");
  process.local_rank = IntFromEnv("LOCAL_RANK");
  process.world_size = IntFromEnv("WORLD_SIZE");
  if (cuptiGetTimestamp(&process.start_ns) != CUPTI_SUCCESS) process.start_ns = 0;  // 0: not known
  char host[256] = {0};
  if (gethostname(host, sizeof(host) - 1) == 0) process.hostname = host;
  std::ifstream cmdline("/proc/self/cmdline", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(cmdline)), std::istreambuf_iterator<char>());
  for (absl::string_view arg : absl::StrSplit(all, '\0', absl::SkipEmpty())) process.command_line.emplace_back(arg);
  return process;
}

Environment CaptureEnvironment() {
  Environment environment;
  const Environment process_environment = Environment::FromCurrentProcess();
  for (const auto& [name, value] : process_environment.variables()) {
    if (MattersToCapture(name)) environment.Set(name, value);
  }
  return environment;
}

std::string TracePath(const std::string& dir) {
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  return absl::StrCat(dir, "/trace-", host, "-", getpid(), ".gctrace");
}

absl::StatusOr<trace::DeviceInfo> DeviceOfContext(CUcontext context) {
  uint32_t device_index = 0;
  if (cuptiGetDeviceId(context, &device_index) != CUPTI_SUCCESS) return absl::UnavailableError("cuptiGetDeviceId");
  CUdevice device;
  if (cuDeviceGet(&device, static_cast<int>(device_index)) != CUDA_SUCCESS) {
    return absl::UnavailableError("cuDeviceGet");
  }
  trace::DeviceInfo info;
  info.index = device_index;
  char name[256] = {0};
  cuDeviceGetName(name, sizeof(name) - 1, device);
  info.gpu.name = name;
  cuDeviceGetAttribute(&info.gpu.cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device);
  cuDeviceGetAttribute(&info.gpu.cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device);
  int driver = 0;
  if (cuDriverGetVersion(&driver) == CUDA_SUCCESS) {
    info.gpu.driver = absl::StrCat(driver / 1000, ".", driver % 1000 / 10);
  }
  return info;
}

}  // namespace graphcheck::capture
