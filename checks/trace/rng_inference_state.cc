// rng-inference-state: PyTorch's graph code failed to update a CUDA generator's graph-safe state in place because the
// state was made under torch.inference_mode() (Megatron's _ensure_generator_state_is_cudagraph_safe repairs this).
// Known from the exception the Python probe saw leave torch/cuda/graphs.py; the message alone (in stderr) is any
// in-place update of an inference tensor and proves nothing about generators. torch 2.11 accepts such state (on an
// H100: generator state cloned, registered or first captured under inference mode replays with fresh draws).
#include "analysis/trace_analysis.h"
#include "checks/checks.h"
#include "checks/trace/probe_findings.h"
#include "core/check_ids.h"

namespace graphcheck::checks {
namespace {

class RngInferenceStateCheck : public PythonExceptionCheck {
 public:
  RngInferenceStateCheck()
      : PythonExceptionCheck(CheckInfo{
            check_id::kRngInferenceState,
            "A generator's graph-safe state was made under inference mode",
            Severity::kError,
            CheckArea::kRng,
            "PyTorch's graph code raised while updating a CUDA generator's state in place: the state tensors were "
            "created under torch.inference_mode(), so they are inference tensors that cannot be updated outside it.",
            {}}) {}
};

}  // namespace

std::unique_ptr<Check> NewRngInferenceStateCheck() { return std::make_unique<RngInferenceStateCheck>(); }

}  // namespace graphcheck::checks
