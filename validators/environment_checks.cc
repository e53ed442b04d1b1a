#include "validators/environment_checks.h"

#include <memory>
#include <vector>

#include "validators/env_expandable_segments_nccl_register.h"
#include "validators/env_launch_blocking.h"
#include "validators/env_nccl_async_error_handling.h"
#include "validators/env_no_caching_allocator.h"

namespace graphcheck {

absl::Status RegisterEnvironmentChecks(CheckRegistry* registry) {
  std::vector<std::unique_ptr<Check>> checks;
  checks.push_back(std::make_unique<EnvExpandableSegmentsNcclRegisterCheck>());
  checks.push_back(std::make_unique<EnvLaunchBlockingCheck>());
  checks.push_back(std::make_unique<EnvNcclAsyncErrorHandlingCheck>());
  checks.push_back(std::make_unique<EnvNoCachingAllocatorCheck>());
  return registry->AddAll(std::move(checks));
}

}  // namespace graphcheck
