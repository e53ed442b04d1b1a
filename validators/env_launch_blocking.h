// env-launch-blocking: CUDA_LAUNCH_BLOCKING=1 makes every launch synchronous, which defeats graphs' purpose and hides
// the launch overhead graphcheck measures.
#ifndef GRAPHCHECK_VALIDATORS_ENV_LAUNCH_BLOCKING_H_
#define GRAPHCHECK_VALIDATORS_ENV_LAUNCH_BLOCKING_H_

#include "validators/env_variable_check.h"

namespace graphcheck {

class EnvLaunchBlockingCheck : public EnvVariableCheck {
 public:
  EnvLaunchBlockingCheck();
};

}  // namespace graphcheck

#endif  // GRAPHCHECK_VALIDATORS_ENV_LAUNCH_BLOCKING_H_
