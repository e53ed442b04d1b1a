// The Python stacks of a trace as a finding shows them: each frame's file, line and function, and whether the frame
// is the program's own code (the frame to point at) or a library's. Shared by the trace analyzers and by the
// validators that read what the Python probe recorded.
#ifndef GRAPHCHECK_CORE_TRACE_PYTHON_FRAMES_H_
#define GRAPHCHECK_CORE_TRACE_PYTHON_FRAMES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "core/finding.h"
#include "core/trace/events.h"

namespace graphcheck::trace {

// Whether a Python source file is the program's own code: not the standard library, an installed package
// (site-packages, dist-packages), PyTorch, a frozen module, or graphcheck's own probe.
bool IsUserPythonFile(absl::string_view file);

// Whether a Python source file is graphcheck's own probe (its package, or the single file of traces before 1.8).
bool IsProbeFile(absl::string_view file);

// The frames of Python stack `id`, innermost first, each marked user or not, without the probe's own frames (its
// hooks call the recorder from inside the program's calls); empty for none.
std::vector<SourceFrame> PythonFrames(const Trace& trace, PythonStackId id);

// "train.py:42 in step": the innermost of the program's own frames (else the innermost frame); "" for none.
std::string RaisedAt(const std::vector<SourceFrame>& frames);

// " (captured at train.py:12 in setup)": the program's line whose capture made `graph` (a Python graph or graphed
// module's id, as the probe's events name it), from the first capture-begin event of that graph; "" when unknown.
std::string CapturedAt(const Trace& trace, uint64_t graph);

}  // namespace graphcheck::trace

#endif  // GRAPHCHECK_CORE_TRACE_PYTHON_FRAMES_H_
