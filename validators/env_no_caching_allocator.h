// env-no-caching-allocator: PYTORCH_NO_CUDA_MEMORY_CACHING=1 turns off the caching allocator, whose private pools
// are what lets a graph own its memory across replays.
#ifndef GRAPHCHECK_VALIDATORS_ENV_NO_CACHING_ALLOCATOR_H_
#define GRAPHCHECK_VALIDATORS_ENV_NO_CACHING_ALLOCATOR_H_

#include "validators/env_variable_check.h"

namespace graphcheck {

class EnvNoCachingAllocatorCheck : public EnvVariableCheck {
 public:
  EnvNoCachingAllocatorCheck();
};

}  // namespace graphcheck

#endif  // GRAPHCHECK_VALIDATORS_ENV_NO_CACHING_ALLOCATOR_H_
