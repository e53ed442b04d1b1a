// A snapshot of what a program ran with: environment variables and, when known, the GPU. Environment checks read
// this; the recorder stores one per process in its trace, and `lint --env` takes the current process's.
#ifndef GRAPHCHECK_CORE_ENVIRONMENT_H_
#define GRAPHCHECK_CORE_ENVIRONMENT_H_

#include <map>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace graphcheck {

struct GpuInfo {
  std::string name;  // "NVIDIA H100 80GB HBM3"
  int cc_major = 0;  // compute capability
  int cc_minor = 0;
  std::string driver;  // driver version, when known

  bool operator==(const GpuInfo& o) const {
    return name == o.name && cc_major == o.cc_major && cc_minor == o.cc_minor && driver == o.driver;
  }
};

class Environment {
 public:
  Environment() = default;
  explicit Environment(std::map<std::string, std::string, std::less<>> variables) : variables_(std::move(variables)) {}

  // The calling process's environment (no GPU information: that comes from capture/).
  static Environment FromCurrentProcess();

  // nullptr when the variable is not set.
  const std::string* Get(absl::string_view name) const;
  void Set(std::string name, std::string value) { variables_[std::move(name)] = std::move(value); }
  const std::map<std::string, std::string, std::less<>>& variables() const { return variables_; }

  const std::optional<GpuInfo>& gpu() const { return gpu_; }
  void set_gpu(GpuInfo gpu) { gpu_ = std::move(gpu); }

 private:
  std::map<std::string, std::string, std::less<>> variables_;
  std::optional<GpuInfo> gpu_;
};

}  // namespace graphcheck

#endif  // GRAPHCHECK_CORE_ENVIRONMENT_H_
