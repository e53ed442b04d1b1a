#include "analysis/torch_ops.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace graphcheck::analysis {
namespace {

// The identifier that starts `s` ([A-Za-z0-9_]*).
absl::string_view LeadingIdentifier(absl::string_view s) {
  size_t n = 0;
  while (n < s.size() && (absl::ascii_isalnum(s[n]) || s[n] == '_')) ++n;
  return s.substr(0, n);
}

}  // namespace

std::string TorchOpFromFrame(absl::string_view frame) {
  // at::_ops::<op>::call / ::redispatch: the dispatcher entry of every operator, named after the schema.
  if (size_t pos = frame.find("at::_ops::"); pos != absl::string_view::npos) {
    absl::string_view name = LeadingIdentifier(frame.substr(pos + 10));
    if (!name.empty()) return absl::StrCat("aten::", name);
  }
  // at::native::<op>[_cuda|_cpu|_out]: the kernels; the device suffix is not part of the operator's name.
  if (size_t pos = frame.find("at::native::"); pos != absl::string_view::npos) {
    absl::string_view name = LeadingIdentifier(frame.substr(pos + 12));
    for (absl::string_view suffix : {"_out_cuda", "_out_cpu", "_cuda", "_cpu", "_out"}) {
      if (absl::ConsumeSuffix(&name, suffix)) break;
    }
    if (!name.empty()) return absl::StrCat("aten::", name);
  }
  return "";
}

std::string TorchOpFromFrames(const std::vector<std::string>& frames) {
  // The innermost dispatcher entry names the operator exactly; at::native frames can be internal helpers
  // (addmm_out_cuda_impl), so they only serve when no dispatcher frame was symbolized.
  for (const std::string& frame : frames) {
    if (absl::StrContains(frame, "at::_ops::")) return TorchOpFromFrame(frame);
  }
  for (const std::string& frame : frames) {
    if (std::string op = TorchOpFromFrame(frame); !op.empty()) return op;
  }
  return "";
}

absl::string_view PythonSpelling(absl::string_view torch_op) {
  static constexpr std::pair<absl::string_view, absl::string_view> kSpellings[] = {
      {"aten::_local_scalar_dense", "Tensor.item(), float(t), bool(t), int(t), or `if t:` on a CUDA tensor"},
      {"aten::item", "Tensor.item()"},
      {"aten::nonzero", "torch.nonzero, torch.where(cond) with one argument, or boolean-mask indexing t[mask]"},
      {"aten::masked_select", "torch.masked_select or boolean-mask indexing t[mask]"},
      {"aten::index", "indexing with a boolean mask (t[mask])"},
      {"aten::unique", "torch.unique"},
      {"aten::_unique2", "torch.unique"},
      {"aten::repeat_interleave", "torch.repeat_interleave without output_size"},
      {"aten::_to_copy", "Tensor.cpu(), Tensor.to('cpu'), Tensor.tolist() or Tensor.numpy()"},
      {"aten::copy_", "a copy between host and device (Tensor.cpu(), .to(), .copy_())"},
      {"aten::is_nonzero", "bool(t) or `if t:` on a CUDA tensor"},
      {"aten::equal", "torch.equal"},
  };
  for (const auto& [op, spelling] : kSpellings) {
    if (op == torch_op) return spelling;
  }
  return "";
}

absl::string_view LazyInitResource(const std::vector<std::string>& frames) {
  // Matched on the frames PyTorch's lazy initialisers and the libraries' create calls leave.
  static constexpr std::pair<absl::string_view, absl::string_view> kResources[] = {
      {"getCUDABlasLtWorkspace", "cuBLASLt workspace"},
      {"getCurrentCUDABlasLtHandle", "cuBLASLt handle"},
      {"cublasLtCreate", "cuBLASLt handle"},
      {"getChosenWorkspaceSize", "cuBLAS workspace"},
      {"getCUDABlasWorkspace", "cuBLAS workspace"},
      {"cublasSetWorkspace", "cuBLAS workspace"},
      {"getCurrentCUDABlasHandle", "cuBLAS handle"},
      {"cublasCreate", "cuBLAS handle"},
      {"getCudnnHandle", "cuDNN handle"},
      {"cudnnCreate", "cuDNN handle"},
      {"getCurrentCUDASolverDnHandle", "cuSOLVER handle"},
      {"cusolverDnCreate", "cuSOLVER handle"},
      {"cufftPlan", "cuFFT plan"},
      {"cufftMakePlan", "cuFFT plan"},
      {"ncclCommInitRank", "NCCL communicator"},
  };
  for (const std::string& frame : frames) {
    for (const auto& [needle, resource] : kResources) {
      if (absl::StrContains(frame, needle)) return resource;
    }
  }
  return "";
}

std::string OperatorClause(const Location& where) {
  if (where.torch_op.empty()) return "";
  const absl::string_view spelling = PythonSpelling(where.torch_op);
  return spelling.empty() ? absl::StrCat(" (", where.torch_op, ")")
                          : absl::StrCat(" (", where.torch_op, ": ", spelling, ")");
}

}  // namespace graphcheck::analysis
