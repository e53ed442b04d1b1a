// Host backtrace frames -> what the user wrote: the PyTorch operator a frame belongs to
// (`at::native::_local_scalar_dense_cuda(...)` -> `aten::_local_scalar_dense`, `at::_ops::nonzero::call(...)` ->
// `aten::nonzero`), the Python-level spelling of the operators that synchronize, and the library initialisation that
// lazily allocates (cuBLAS / cuDNN handles and workspaces). The one place that knows frame spellings.
#ifndef GRAPHCHECK_ANALYSIS_TORCH_OPS_H_
#define GRAPHCHECK_ANALYSIS_TORCH_OPS_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "core/finding.h"

namespace graphcheck::analysis {

// The aten operator a symbolized frame belongs to, or "" when the frame is not an operator.
std::string TorchOpFromFrame(absl::string_view frame);
// The innermost operator in `frames` (innermost first): its dispatcher frame (at::_ops::) if any, else its kernel
// frame (at::native::); "" when none shows.
std::string TorchOpFromFrames(const std::vector<std::string>& frames);
// How users spell an operator in Python, for the operators that synchronize or have data-dependent shapes:
// "aten::_local_scalar_dense" -> "Tensor.item(), float(t), bool(t), int(t)". "" when there is nothing to add.
absl::string_view PythonSpelling(absl::string_view torch_op);
// The lazily initialised library resource a backtrace is creating ("cuBLAS handle", "cuDNN handle",
// "cuBLAS workspace", ...), or "" when it is not library initialisation.
absl::string_view LazyInitResource(const std::vector<std::string>& frames);
// " (aten::_local_scalar_dense: Tensor.item(), ...)" for a finding whose backtrace shows an operator; "" otherwise.
std::string OperatorClause(const Location& where);

}  // namespace graphcheck::analysis

#endif  // GRAPHCHECK_ANALYSIS_TORCH_OPS_H_
