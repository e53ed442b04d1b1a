// env-nccl-async-error-handling: in a distributed (DDP) job, the NCCL watchdog's asynchronous error handling polls
// CUDA events from its own thread, which invalidates a global-mode capture.
#ifndef GRAPHCHECK_VALIDATORS_ENV_NCCL_ASYNC_ERROR_HANDLING_H_
#define GRAPHCHECK_VALIDATORS_ENV_NCCL_ASYNC_ERROR_HANDLING_H_

#include "core/check.h"

namespace graphcheck {

class EnvNcclAsyncErrorHandlingCheck : public EnvironmentCheck {
 public:
  const CheckInfo& info() const override;

 protected:
  void CheckEnvironment(const Environment& env, const BoundOptions& options,
                        std::vector<Finding>* findings) const override;
};

}  // namespace graphcheck

#endif  // GRAPHCHECK_VALIDATORS_ENV_NCCL_ASYNC_ERROR_HANDLING_H_
