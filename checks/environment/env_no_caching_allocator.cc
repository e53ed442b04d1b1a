// env-no-caching-allocator: PYTORCH_NO_CUDA_MEMORY_CACHING=1 turns off the caching allocator, whose private pools
// are what lets a graph own its memory across replays.
#include <memory>

#include "checks/checks.h"
#include "checks/environment/env_variable_check.h"
#include "core/check_ids.h"

namespace graphcheck::checks {
namespace {

class EnvNoCachingAllocatorCheck : public EnvVariableCheck {
 public:
  EnvNoCachingAllocatorCheck();
};

}  // namespace

EnvNoCachingAllocatorCheck::EnvNoCachingAllocatorCheck()
    : EnvVariableCheck(Spec{
          CheckInfo{check_id::kEnvNoCachingAllocator,
                    "PYTORCH_NO_CUDA_MEMORY_CACHING=1 disables the caching allocator",
                    Severity::kError,
                    CheckArea::kEnvironment,
                    "With the caching allocator off, every tensor allocation is a cudaMalloc, which is not permitted "
                    "during stream capture, and graphs cannot keep a private memory pool.",
                    {}},
          "PYTORCH_NO_CUDA_MEMORY_CACHING", "1",
          "PYTORCH_NO_CUDA_MEMORY_CACHING=1 makes PyTorch call cudaMalloc/cudaFree for every tensor. Those calls are "
          "not permitted while a stream is capturing (capture fails with cudaErrorStreamCaptureUnsupported), and "
          "graphs lose the private memory pool that keeps their tensors alive between replays.",
          "Unset PYTORCH_NO_CUDA_MEMORY_CACHING. To debug memory errors, use compute-sanitizer with the caching "
          "allocator on instead."}) {}

std::unique_ptr<Check> NewEnvNoCachingAllocatorCheck() { return std::make_unique<EnvNoCachingAllocatorCheck>(); }

}  // namespace graphcheck::checks
