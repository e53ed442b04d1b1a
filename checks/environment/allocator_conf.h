// PyTorch's caching-allocator configuration (PYTORCH_CUDA_ALLOC_CONF, PYTORCH_ALLOC_CONF): "k1:v1,k2:v2".
#ifndef GRAPHCHECK_CHECKS_ENVIRONMENT_ALLOCATOR_CONF_H_
#define GRAPHCHECK_CHECKS_ENVIRONMENT_ALLOCATOR_CONF_H_

#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace graphcheck::checks {

// The value of `key` in an allocator configuration (spaces allowed; the last occurrence wins), or nullopt.
std::optional<std::string> AllocatorConfValue(absl::string_view conf, absl::string_view key);

}  // namespace graphcheck::checks

#endif  // GRAPHCHECK_CHECKS_ENVIRONMENT_ALLOCATOR_CONF_H_
