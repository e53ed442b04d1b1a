// What `graphcheck check` is asked to check, before any LibTorch is loaded: the model reference (a TorchScript file or
// `builtin:NAME`), the input specs (`NAME:DIMxDIM...:DTYPE`) and the catalog of built-in models with their default
// inputs. The CLI validates these so bad input exits 2 at once, and the engine builds from the same table.
#ifndef GRAPHCHECK_CORE_MODEL_SPEC_H_
#define GRAPHCHECK_CORE_MODEL_SPEC_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace graphcheck {

// One input tensor: `x:64x512:float32`. The engine fills it with seeded values: normal for floating dtypes, uniform
// in [0, 10) for integers.
struct InputSpec {
  std::string name;
  std::vector<int64_t> shape;
  std::string dtype;  // one of InputDtypes()

  bool operator==(const InputSpec& o) const { return name == o.name && shape == o.shape && dtype == o.dtype; }
};

// The dtypes --input accepts: float32, float16, bfloat16, float64, int64, int32.
const std::vector<std::string>& InputDtypes();
// InvalidArgument naming the part that is wrong.
absl::StatusOr<InputSpec> ParseInputSpec(absl::string_view text);

// `--vary NAME:DIM=SIZES`: the model's input NAME takes these sizes along dimension DIM (`x:0=16,32,64`), as a
// training loop with a variable batch or sequence length feeds it.
struct VariedDimension {
  std::string input;
  int dim = 0;
  std::vector<int64_t> sizes;  // at least one, each positive, no repeats

  bool operator==(const VariedDimension& o) const { return input == o.input && dim == o.dim && sizes == o.sizes; }
};
// InvalidArgument naming the part that is wrong.
absl::StatusOr<VariedDimension> ParseVariedDimension(absl::string_view text);

struct BuiltinModel {
  std::string name;  // after "builtin:", e.g. "transformer", "defect/item-in-forward"
  std::string description;
  std::vector<InputSpec> inputs;  // default inputs
  // For planted-defect variants: the check ids that must flag them. Empty for clean models.
  std::vector<std::string> expected_checks;
};

const std::vector<BuiltinModel>& BuiltinModels();

// A model reference: `builtin:NAME` or a path to a TorchScript archive.
struct ModelRef {
  const BuiltinModel* builtin = nullptr;  // set for builtin:NAME
  std::string path;                       // set for a file
};
// InvalidArgument for an unknown builtin name (listing the known ones), a missing or unreadable file, or a file that
// is not a zip archive (what torch.jit.save writes).
absl::StatusOr<ModelRef> ResolveModelRef(absl::string_view text);

}  // namespace graphcheck

#endif  // GRAPHCHECK_CORE_MODEL_SPEC_H_
