// Where a finding points, in words, for every renderer: the user's Python line first ("train.py:42 in train_step"),
// then the configuration file and key, the call, the operator, the process, thread and stream, and the NVTX path.
// Unescaped: each renderer escapes for its own format.
#ifndef GRAPHCHECK_REPORT_WHERE_H_
#define GRAPHCHECK_REPORT_WHERE_H_

#include <string>
#include <vector>

#include "core/finding.h"

namespace graphcheck {

// "train.py:42 in train_step" (the line and function when known).
std::string FrameText(const SourceFrame& frame);

// "file:line:column" of a static finding, or "" when it has no file.
std::string FileText(const Location& where);

// The parts of the one-line summary, in order; empty fields are left out.
std::vector<std::string> WhereParts(const Location& where);

}  // namespace graphcheck

#endif  // GRAPHCHECK_REPORT_WHERE_H_
