#include "validators/env_nccl_async_error_handling.h"

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace graphcheck {
namespace {

// "yes"/"no" force the answer; "auto" looks for a launcher's WORLD_SIZE above 1.
bool IsDistributed(const Environment& env, const std::string& mode) {
  if (mode == "yes") return true;
  if (mode == "no") return false;
  int world_size = 1;
  const std::string* value = env.Get("WORLD_SIZE");
  return value != nullptr && absl::SimpleAtoi(*value, &world_size) && world_size > 1;
}

}  // namespace

const CheckInfo& EnvNcclAsyncErrorHandlingCheck::info() const {
  static const CheckInfo* const kInfo = new CheckInfo{
      "env-nccl-async-error-handling",
      "NCCL asynchronous error handling is on in a distributed job",
      Severity::kWarning,
      CheckArea::kEnvironment,
      "TORCH_NCCL_ASYNC_ERROR_HANDLING is not 0 in a distributed job. The NCCL watchdog thread then queries CUDA "
      "events while the training thread captures, which invalidates a global-mode capture of DDP graphs.",
      {{"distributed",
        "auto",
        "whether the job is distributed: auto (WORLD_SIZE above 1), yes, or no",
        0,
        0,
        {"auto", "yes", "no"}}}};
  return *kInfo;
}

void EnvNcclAsyncErrorHandlingCheck::CheckEnvironment(const Environment& env, const BoundOptions& options,
                                                      std::vector<Finding>* findings) const {
  if (!IsDistributed(env, options.Get("distributed"))) return;
  const std::string* value = env.Get("TORCH_NCCL_ASYNC_ERROR_HANDLING");
  if (value != nullptr && absl::StripAsciiWhitespace(*value) == "0") return;

  Finding finding = NewFinding();
  finding.where.key = "TORCH_NCCL_ASYNC_ERROR_HANDLING";
  finding.evidence.push_back(value == nullptr ? std::string("TORCH_NCCL_ASYNC_ERROR_HANDLING is not set (PyTorch's "
                                                            "default turns asynchronous error handling on)")
                                              : absl::StrCat("TORCH_NCCL_ASYNC_ERROR_HANDLING=", *value));
  if (const std::string* world = env.Get("WORLD_SIZE")) finding.evidence.push_back(absl::StrCat("WORLD_SIZE=", *world));
  finding.message =
      "NCCL asynchronous error handling is on in a distributed job. Its watchdog thread polls the completion events "
      "of collectives (cudaEventQuery) from outside the training thread; when that happens during a global-mode "
      "stream capture of DDP's forward/backward, CUDA invalidates the capture (cudaErrorStreamCaptureImplicit / "
      "cudaErrorStreamCaptureInvalidated) and the step fails.";
  finding.fix =
      "Set TORCH_NCCL_ASYNC_ERROR_HANDLING=0 before the process group is created (os.environ in the launcher or the "
      "job's environment), or capture with capture_error_mode=\"thread_local\".";
  findings->push_back(std::move(finding));
}

}  // namespace graphcheck
