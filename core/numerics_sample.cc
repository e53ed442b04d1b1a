#include "core/numerics_sample.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace graphcheck {

absl::string_view TensorRoleName(TensorRole role) {
  switch (role) {
    case TensorRole::kOutput:
      return "output";
    case TensorRole::kGradient:
      return "gradient";
    case TensorRole::kParameter:
      return "parameter";
    case TensorRole::kBuffer:
      return "buffer";
  }
  return "unknown";
}

absl::StatusOr<TensorRole> ParseTensorRole(absl::string_view name) {
  for (TensorRole role : {TensorRole::kOutput, TensorRole::kGradient, TensorRole::kParameter, TensorRole::kBuffer}) {
    if (name == TensorRoleName(role)) return role;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown tensor role '", name, "' (expected output, gradient, parameter or buffer)"));
}

}  // namespace graphcheck
