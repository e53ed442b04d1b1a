#include "core/model_spec.h"
#include "core/check_ids.h"

#include <algorithm>
#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace graphcheck {

const std::vector<std::string>& InputDtypes() {
  static const std::vector<std::string> kDtypes = {"float32", "float16", "bfloat16", "float64", "int64", "int32"};
  return kDtypes;
}

absl::StatusOr<InputSpec> ParseInputSpec(absl::string_view text) {
  const std::vector<absl::string_view> parts = absl::StrSplit(text, ':');
  if (parts.size() != 3 || parts[0].empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("input spec '", text, "' is not NAME:DIMxDIMx...:DTYPE (e.g. x:64x512:float32)"));
  }
  InputSpec spec;
  spec.name = std::string(parts[0]);
  for (absl::string_view dim : absl::StrSplit(parts[1], 'x')) {
    int64_t value = 0;
    if (!absl::SimpleAtoi(dim, &value) || value <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("input spec '", text, "': dimension '", dim, "' is not a positive integer"));
    }
    spec.shape.push_back(value);
  }
  spec.dtype = std::string(parts[2]);
  const auto& dtypes = InputDtypes();
  if (std::find(dtypes.begin(), dtypes.end(), spec.dtype) == dtypes.end()) {
    return absl::InvalidArgumentError(absl::StrCat("input spec '", text, "': unknown dtype '", spec.dtype, "' (one of ",
                                                   absl::StrJoin(dtypes, ", "), ")"));
  }
  return spec;
}

absl::StatusOr<VariedDimension> ParseVariedDimension(absl::string_view text) {
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("--vary '", text, "' is not NAME:DIM=SIZE,SIZE,... (e.g. x:0=16,32,64): ", why));
  };
  const std::vector<absl::string_view> name_rest = absl::StrSplit(text, absl::MaxSplits(':', 1));
  if (name_rest.size() != 2 || name_rest[0].empty()) return bad("no input name");
  const std::vector<absl::string_view> dim_sizes = absl::StrSplit(name_rest[1], absl::MaxSplits('=', 1));
  VariedDimension varied;
  varied.input = std::string(name_rest[0]);
  if (dim_sizes.size() != 2 || !absl::SimpleAtoi(dim_sizes[0], &varied.dim) || varied.dim < 0) {
    return bad("the dimension is not a non-negative integer");
  }
  for (absl::string_view size_text : absl::StrSplit(dim_sizes[1], ',')) {
    int64_t size = 0;
    if (!absl::SimpleAtoi(size_text, &size) || size <= 0) {
      return bad(absl::StrCat("size '", size_text, "' is not a positive integer"));
    }
    if (std::find(varied.sizes.begin(), varied.sizes.end(), size) != varied.sizes.end()) {
      return bad(absl::StrCat("size ", size, " is given twice"));
    }
    varied.sizes.push_back(size);
  }
  return varied;
}

const std::vector<BuiltinModel>& BuiltinModels() {
  // Sizes: the mlp and transformer are launch-bound at these batch sizes (graphs pay off); the convnet is a small
  // image classifier with batch norm.
  static const std::vector<BuiltinModel> kModels = {
      {"mlp", "4 linear layers of width 1024 with ReLU", {{"x", {64, 1024}, "float32"}}, {}},
      {"transformer",
       "4 encoder layers (8-head attention, layer norm, dropout 0.1), width 256; input is sequence x batch x width",
       {{"x", {128, 8, 256}, "float32"}},
       {}},
      {"convnet", "3 conv + batch norm + ReLU blocks and a linear classifier", {{"x", {32, 3, 32, 32}, "float32"}}, {}},
      {"defect/item-in-forward",
       "mlp whose forward reads a value back with Tensor.item()",
       {{"x", {64, 1024}, "float32"}},
       {check_id::kSyncInCapture}},
      {"defect/data-dependent-shape",
       "mlp whose forward keeps the rows selected by nonzero()",
       {{"x", {64, 1024}, "float32"}},
       {check_id::kSyncInCapture}},
      {"defect/h2d-in-forward",
       "mlp whose forward copies a CPU tensor to the GPU",
       {{"x", {64, 1024}, "float32"}},
       {check_id::kPageableMemcpy}},
      {"defect/frozen-host-scalar",
       "mlp whose forward scales by a host-side number that changes every call",
       {{"x", {64, 1024}, "float32"}},
       {check_id::kNumericsForward}},
      {"defect/buffer-rebound",
       "mlp whose forward rebinds a step-counter buffer to a new tensor instead of updating it in place",
       {{"x", {64, 1024}, "float32"}},
       {check_id::kStateElided}},
      {"defect/host-random-shift",
       "mlp whose forward rolls its activations by a shift drawn on the host every call",
       {{"x", {64, 1024}, "float32"}},
       {check_id::kRngFrozenMask}},
      {"defect/random-only-in-eager",
       "mlp with dropout whose forward also draws a random sample, but only when not capturing",
       {{"x", {64, 1024}, "float32"}},
       {check_id::kRngEagerMismatch}},
  };
  return kModels;
}

absl::StatusOr<ModelRef> ResolveModelRef(absl::string_view text) {
  ModelRef ref;
  constexpr absl::string_view kBuiltin = "builtin:";
  if (absl::StartsWith(text, kBuiltin)) {
    const absl::string_view name = text.substr(kBuiltin.size());
    for (const BuiltinModel& model : BuiltinModels()) {
      if (model.name == name) {
        ref.builtin = &model;
        return ref;
      }
    }
    std::vector<std::string> names;
    for (const BuiltinModel& model : BuiltinModels()) names.push_back(model.name);
    return absl::InvalidArgumentError(
        absl::StrCat("unknown built-in model '", name, "' (one of ", absl::StrJoin(names, ", "), ")"));
  }
  std::ifstream file{std::string(text), std::ios::binary};
  if (!file) return absl::InvalidArgumentError(absl::StrCat("cannot read model file '", text, "'"));
  char magic[2] = {0, 0};
  file.read(magic, 2);
  if (file.gcount() != 2 || magic[0] != 'P' || magic[1] != 'K') {
    return absl::InvalidArgumentError(
        absl::StrCat("'", text, "' is not a TorchScript archive (torch.jit.save writes a zip file)"));
  }
  ref.path = std::string(text);
  return ref;
}

}  // namespace graphcheck
