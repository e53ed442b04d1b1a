// env-launch-blocking: CUDA_LAUNCH_BLOCKING=1 makes every launch synchronous, which defeats graphs' purpose and hides
// the launch overhead graphcheck measures.
#include <memory>

#include "checks/checks.h"
#include "checks/environment/env_variable_check.h"
#include "core/check_ids.h"

namespace graphcheck::checks {
namespace {

class EnvLaunchBlockingCheck : public EnvVariableCheck {
 public:
  EnvLaunchBlockingCheck();
};

}  // namespace

EnvLaunchBlockingCheck::EnvLaunchBlockingCheck()
    : EnvVariableCheck(Spec{
          CheckInfo{check_id::kEnvLaunchBlocking,
                    "CUDA_LAUNCH_BLOCKING=1 serializes every launch",
                    Severity::kWarning,
                    CheckArea::kEnvironment,
                    "CUDA_LAUNCH_BLOCKING=1 makes each kernel launch wait for the kernel. Eager timings become "
                    "meaningless, the launch-overhead forecast is wrong, and capture-time behaviour differs from "
                    "production.",
                    {}},
          "CUDA_LAUNCH_BLOCKING", "1",
          "CUDA_LAUNCH_BLOCKING=1 makes every kernel launch synchronous: eager step times include every kernel's "
          "run time, so launch overhead and the savings CUDA graphs would bring cannot be measured, and the program "
          "does not behave as it will in production.",
          "Unset CUDA_LAUNCH_BLOCKING (or set it to 0); use it only to locate an asynchronous CUDA error, then remove "
          "it."}) {}

std::unique_ptr<Check> NewEnvLaunchBlockingCheck() { return std::make_unique<EnvLaunchBlockingCheck>(); }

}  // namespace graphcheck::checks
