// A numerics sample: one tensor as the eager run and the graphed run left it, reduced to the figures the numerics
// and state checks judge (worst difference, where it is, non-finite counts) and to the run-to-run noise of eager
// itself (the same tensor from a second eager run). The engine (`graphcheck check`) measures them on the GPU; the
// checks read them anywhere.
#ifndef GRAPHCHECK_CORE_NUMERICS_SAMPLE_H_
#define GRAPHCHECK_CORE_NUMERICS_SAMPLE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace graphcheck {

// What the tensor is, and when it was taken. Outputs and gradients come from the first step (both runs start from
// the same state there, so nothing has had time to diverge); parameters and buffers after the last step.
enum class TensorRole {
  kOutput,     // a forward output of the first step
  kGradient,   // a parameter's gradient after the first step's backward
  kParameter,  // a parameter after the last optimizer step
  kBuffer,     // a buffer (running statistics, counters) after the last step
};
absl::string_view TensorRoleName(TensorRole role);  // "output", "gradient", "parameter", "buffer"
absl::StatusOr<TensorRole> ParseTensorRole(absl::string_view name);

// The figures of one compared tensor: the engine's samples (below) and the Python probe's --shadow comparisons
// (trace::ShadowComparison) carry the same ones.
struct NumericsFigures {
  int64_t numel = 0;
  // Over the elements finite in both runs: the largest |graphed - eager|, the element where it is (flat index) and
  // the two values there, and the largest |eager| (the scale the relative tolerance applies to).
  double max_abs_error = 0;
  int64_t worst_index = -1;
  double eager_at_worst = 0;
  double graphed_at_worst = 0;
  double eager_abs_max = 0;
  int64_t eager_nonfinite = 0;  // NaN or Inf elements
  int64_t graphed_nonfinite = 0;
  // The largest |eager repeat - eager|: what two eager runs from the same state differ by. Negative: no repeat ran.
  double eager_spread = -1;

  bool operator==(const NumericsFigures& o) const {
    return numel == o.numel && max_abs_error == o.max_abs_error && worst_index == o.worst_index &&
           eager_at_worst == o.eager_at_worst && graphed_at_worst == o.graphed_at_worst &&
           eager_abs_max == o.eager_abs_max && eager_nonfinite == o.eager_nonfinite &&
           graphed_nonfinite == o.graphed_nonfinite && eager_spread == o.eager_spread;
  }
};

struct NumericsSample : NumericsFigures {
  std::string name;  // "encoder.layers.0.linear1.weight", "output 0"
  TensorRole role = TensorRole::kOutput;
  std::string dtype;  // "float32", "bfloat16", ...
  // Parameters and buffers: whether the tensor's final value differs from the one the runs started from.
  bool changed_in_eager = false;
  bool changed_in_graphed = false;

  bool operator==(const NumericsSample& o) const {
    return NumericsFigures::operator==(o) && name == o.name && role == o.role && dtype == o.dtype &&
           changed_in_eager == o.changed_in_eager && changed_in_graphed == o.changed_in_graphed;
  }
};

}  // namespace graphcheck

#endif  // GRAPHCHECK_CORE_NUMERICS_SAMPLE_H_
