// The Python stacks of a trace as a finding shows them: each frame's file, line and function, and whether the frame
// is the program's own code (the frame to point at) or a library's. Shared by the trace analyzers and by the
// validators that read what the Python probe recorded.
#ifndef GRAPHCHECK_CORE_TRACE_PYTHON_FRAMES_H_
#define GRAPHCHECK_CORE_TRACE_PYTHON_FRAMES_H_

#include <vector>

#include "absl/strings/string_view.h"
#include "core/finding.h"
#include "core/trace/events.h"

namespace graphcheck::trace {

// Whether a Python source file is the program's own code: not the standard library, an installed package
// (site-packages, dist-packages), PyTorch, a frozen module, or graphcheck's own probe.
bool IsUserPythonFile(absl::string_view file);

// The frames of Python stack `id`, innermost first, each marked user or not; empty for none.
std::vector<SourceFrame> PythonFrames(const Trace& trace, PythonStackId id);

}  // namespace graphcheck::trace

#endif  // GRAPHCHECK_CORE_TRACE_PYTHON_FRAMES_H_
