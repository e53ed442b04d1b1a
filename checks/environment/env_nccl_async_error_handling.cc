// env-nccl-async-error-handling: in a distributed (DDP) job, the NCCL watchdog's asynchronous error handling polls
// CUDA events from its own thread, which can invalidate a global-mode capture. From the environment alone (`lint`, or
// traces before format 1.7) it warns on the setting. With a trace that names its threads (`run`, `analyze`), the
// trace decides: on an H100 with torch 2.11 and CUDA 13 the watchdog (thread pt_nccl_watchdg) queried events during
// a global-mode capture of DDP's step and CUDA accepted every query, so only a watchdog call that failed with a
// capture error (900-910) is reported, as an error, with that call as evidence.
#include <memory>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "checks/checks.h"
#include "core/check.h"
#include "core/check_ids.h"
#include "core/environment.h"
#include "trace/events.h"

namespace graphcheck::checks {
namespace {

// The environment decides, or the trace where there is one that names its threads.
class EnvNcclAsyncErrorHandlingCheck : public CheckOf<Environment, trace::Trace> {
 public:
  EnvNcclAsyncErrorHandlingCheck();
  bool CanRun(const CheckInputs& inputs) const override { return inputs.Find<Environment>() != nullptr; }

 protected:
  void Read(const Environment* environment, const trace::Trace* trace, const BoundOptions& options,
            std::vector<Finding>* findings) const override;
};

}  // namespace
namespace {

// "yes"/"no" force the answer; "auto" looks for a launcher's WORLD_SIZE above 1.
bool IsDistributed(const Environment& env, const std::string& mode) {
  if (mode == "yes") return true;
  if (mode == "no") return false;
  int world_size = 1;
  const std::string* value = env.Get("WORLD_SIZE");
  return value != nullptr && absl::SimpleAtoi(*value, &world_size) && world_size > 1;
}

// PyTorch's name for ProcessGroupNCCL's watchdog thread (c10::setThreadName, 15 characters at most).
constexpr char kWatchdogThread[] = "pt_nccl_watchdg";

// The first call of the watchdog thread that failed with a stream-capture error (900-910).
const trace::ApiCall* FailedWatchdogCall(const trace::Trace& trace) {
  for (const trace::ApiCall& call : trace.api_calls) {
    const int32_t code = trace.Detail(call).return_code;
    if (code >= 900 && code <= 910 && trace.ThreadNameOf(call.thread_id) == kWatchdogThread) return &call;
  }
  return nullptr;
}

}  // namespace

EnvNcclAsyncErrorHandlingCheck::EnvNcclAsyncErrorHandlingCheck()
    : CheckOf(CheckInfo{
          check_id::kEnvNcclAsyncErrorHandling,
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
            {"auto", "yes", "no"}}}}) {}

void EnvNcclAsyncErrorHandlingCheck::Read(const Environment* environment, const trace::Trace* trace,
                                          const BoundOptions& options, std::vector<Finding>* findings) const {
  const Environment& env = *environment;
  const std::string* value = env.Get("TORCH_NCCL_ASYNC_ERROR_HANDLING");
  if (value != nullptr && absl::StripAsciiWhitespace(*value) == "0") return;
  // A trace that names its threads (format 1.7) shows what the watchdog did; without one, the environment decides.
  const trace::ApiCall* failed = nullptr;
  if (trace != nullptr && !trace->thread_names.empty()) {
    failed = FailedWatchdogCall(*trace);
    if (failed == nullptr) return;
  } else if (!IsDistributed(env, options.Get("distributed"))) {
    return;
  }

  Finding finding = NewFinding();
  finding.where.key = "TORCH_NCCL_ASYNC_ERROR_HANDLING";
  finding.evidence.push_back(value == nullptr ? std::string("TORCH_NCCL_ASYNC_ERROR_HANDLING is not set (PyTorch's "
                                                            "default turns asynchronous error handling on)")
                                              : absl::StrCat("TORCH_NCCL_ASYNC_ERROR_HANDLING=", *value));
  if (const std::string* world = env.Get("WORLD_SIZE")) finding.evidence.push_back(absl::StrCat("WORLD_SIZE=", *world));
  if (failed != nullptr) {
    const trace::CallDetail& detail = trace->Detail(*failed);
    finding.severity = Severity::kError;
    finding.where.api = std::string(trace->String(detail.name));
    finding.where.thread_id = failed->thread_id;
    finding.evidence.push_back(absl::StrCat(trace->String(detail.name), " on NCCL's watchdog thread ",
                                            failed->thread_id, " (", kWatchdogThread, ") failed with ",
                                            detail.return_code, " while a capture was under way"));
    finding.message =
        "NCCL's watchdog thread polled a collective's completion event (cudaEventQuery) during a global-mode "
        "capture and CUDA refused the call, which invalidates the capture.";
  } else {
    finding.message =
        "NCCL asynchronous error handling is on in a distributed job. Its watchdog thread polls the completion events "
        "of collectives (cudaEventQuery) from outside the training thread; when that happens during a global-mode "
        "stream capture of DDP's forward/backward, CUDA can invalidate the capture (cudaErrorStreamCaptureImplicit / "
        "cudaErrorStreamCaptureInvalidated) and the step fails.";
  }
  finding.fix =
      "Set TORCH_NCCL_ASYNC_ERROR_HANDLING=0 before the process group is created (os.environ in the launcher or the "
      "job's environment), or capture with capture_error_mode=\"thread_local\".";
  findings->push_back(std::move(finding));
}

std::unique_ptr<Check> NewEnvNcclAsyncErrorHandlingCheck() {
  return std::make_unique<EnvNcclAsyncErrorHandlingCheck>();
}

}  // namespace graphcheck::checks
