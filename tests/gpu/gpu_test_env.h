// What the GPU tests share: where the build and the sources are (the GPU machine runs a copy of the tree at another
// path, so the environment can move them) and whether this machine has a GPU at all.
#ifndef GRAPHCHECK_TESTS_GPU_GPU_TEST_ENV_H_
#define GRAPHCHECK_TESTS_GPU_GPU_TEST_ENV_H_

#include <dlfcn.h>

#include <cstdlib>
#include <fstream>
#include <string>

namespace graphcheck::gpu_test {

inline std::string PathSetting(const char* variable, const char* built_in) {
  const char* value = std::getenv(variable);
  return value != nullptr ? value : built_in;
}
inline std::string BuildDir() { return PathSetting("GRAPHCHECK_BUILD_DIR", GRAPHCHECK_BINARY_DIR); }
inline std::string SourceDir() { return PathSetting("GRAPHCHECK_SOURCE_DIR", GRAPHCHECK_SOURCE_DIR); }

// The GPUs the driver shows this process (CUDA_VISIBLE_DEVICES applies); 0 without a driver.
inline int GpuCount() {
  void* driver = dlopen("libcuda.so.1", RTLD_LAZY);
  if (driver == nullptr) return 0;
  auto init = reinterpret_cast<int (*)(unsigned)>(dlsym(driver, "cuInit"));
  auto count = reinterpret_cast<int (*)(int*)>(dlsym(driver, "cuDeviceGetCount"));
  int devices = 0;
  return init != nullptr && count != nullptr && init(0) == 0 && count(&devices) == 0 ? devices : 0;
}
inline bool HasGpu() { return GpuCount() > 0; }

// The line of `program` that ends in `marker`; -1 if none.
inline int MarkedLine(const std::string& marker, const std::string& program) {
  std::ifstream in(program);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.size() >= marker.size() && line.compare(line.size() - marker.size(), marker.size(), marker) == 0) return n;
  }
  return -1;
}

// The line of `program` that ends in "# defect: MODE" (the GPU test programs mark where a finding belongs); -1 if none.
inline int DefectLine(const std::string& mode, const std::string& program) {
  return MarkedLine("# defect: " + mode, program);
}

inline constexpr char kNoGpu[] = "no GPU or NVIDIA driver on this machine: GPU tests run with scripts/gpu-tests.sh";

}  // namespace graphcheck::gpu_test

#endif  // GRAPHCHECK_TESTS_GPU_GPU_TEST_ENV_H_
