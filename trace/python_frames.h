// The Python stacks of a trace as a finding shows them: each frame's file, line and function, and whether the frame
// is the program's own code (the frame to point at) or a library's. Shared by the trace checks and by the
// checks that read what the Python probe recorded.
#ifndef GRAPHCHECK_TRACE_PYTHON_FRAMES_H_
#define GRAPHCHECK_TRACE_PYTHON_FRAMES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "core/finding.h"
#include "trace/events.h"

namespace graphcheck::trace {

// Whether a Python source file is the program's own code: not the standard library, an installed package
// (site-packages, dist-packages), PyTorch, a frozen module, or graphcheck's own probe.
bool IsUserPythonFile(absl::string_view file);

// Whether a Python source file is graphcheck's own probe (its package, or the single file of traces before 1.8).
bool IsProbeFile(absl::string_view file);

// The frames of Python stack `id`, innermost first, each marked user or not, without the probe's own frames (its
// hooks call the recorder from inside the program's calls); empty for none.
std::vector<SourceFrame> PythonFrames(const Trace& trace, PythonStackId id);

// Which frames of a Python stack (`files`, innermost first) a bound of `max` frames keeps: all when they fit, else the
// innermost kInnermostFramesKept (where it happened) and, of the rest, the program's own frames, the outermost ones
// when they are too many, so that a call six frames deep in a library still names the program's line. The probe
// applies the same rule to the frames it sends (python/probe/graphcheck_probe/frames.py).
inline constexpr size_t kInnermostFramesKept = 24;
std::vector<size_t> FramesToKeep(const std::vector<absl::string_view>& files, size_t max);

// The installed package a Python source file belongs to: "transformers" for .../site-packages/transformers/...,
// "torch" for PyTorch; "" for the program's own files and the standard library.
std::string PackageOf(absl::string_view file);

// "train.py:42 in step": the innermost of the program's own frames (else the innermost frame); "" for none.
std::string ProgramSite(const std::vector<SourceFrame>& frames);

// Where a stack (innermost first) left the program for a third-party library, PyTorch's own frames aside: the
// library's innermost frame before the program's, as "transformers (masking_utils.py:604)", and the package; empty
// when the program's own frame comes first (or there is none).
struct LibrarySite {
  std::string package;  // "transformers"
  std::string where;    // "transformers (masking_utils.py:604)"
};
LibrarySite ThirdPartySite(const std::vector<SourceFrame>& frames);

// "at train.py:42 in step" where the program's own frame raised; where a library raised, that library and its line
// before the program's frame that called it: "in transformers (masking_utils.py:604), called from train.py:14 in
// main"; "" for no frames.
std::string RaisedAt(const std::vector<SourceFrame>& frames);

// " (captured at train.py:12 in setup)": the program's line whose capture made `graph` (a Python graph or graphed
// module's id, as the probe's events name it), from the first capture-begin event of that graph; "" when unknown.
std::string CapturedAt(const Trace& trace, uint64_t graph);

}  // namespace graphcheck::trace

#endif  // GRAPHCHECK_TRACE_PYTHON_FRAMES_H_
