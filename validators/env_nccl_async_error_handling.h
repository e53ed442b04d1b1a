// env-nccl-async-error-handling: in a distributed (DDP) job, the NCCL watchdog's asynchronous error handling polls
// CUDA events from its own thread, which can invalidate a global-mode capture. From the environment alone (`lint`, or
// traces before format 1.7) it warns on the setting. With a trace that names its threads (`run`, `analyze`), the
// trace decides: on an H100 with torch 2.11 and CUDA 13 the watchdog (thread pt_nccl_watchdg) queried events during
// a global-mode capture of DDP's step and CUDA accepted every query, so only a watchdog call that failed with a
// capture error (900-910) is reported, as an error, with that call as evidence.
#ifndef GRAPHCHECK_VALIDATORS_ENV_NCCL_ASYNC_ERROR_HANDLING_H_
#define GRAPHCHECK_VALIDATORS_ENV_NCCL_ASYNC_ERROR_HANDLING_H_

#include "core/check.h"

namespace graphcheck {

class EnvNcclAsyncErrorHandlingCheck : public Check {
 public:
  const CheckInfo& info() const override;
  bool CanRun(const CheckInputs& inputs) const override { return inputs.environment != nullptr; }
  void Run(const CheckInputs& inputs, const BoundOptions& options, std::vector<Finding>* findings) const override;
};

}  // namespace graphcheck

#endif  // GRAPHCHECK_VALIDATORS_ENV_NCCL_ASYNC_ERROR_HANDLING_H_
