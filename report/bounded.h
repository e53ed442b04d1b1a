// A report bounded by size before it is rendered, in every format: a run's findings carry program text (an exception
// message, a Python function name, an NVTX range) that can be megabytes long, and a report read back carries whatever
// its file says. Each text field is cut to a size its format can show, with a marker saying how much was cut; lists
// are cut to their documented maxima (core/report.h), the rest counted where the report counts it. Counts of findings
// are the renderers' (report/limits.h): the most severe come first, so what a cap leaves out is never more severe
// than what it keeps.
#ifndef GRAPHCHECK_REPORT_BOUNDED_H_
#define GRAPHCHECK_REPORT_BOUNDED_H_

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"
#include "core/report.h"

namespace graphcheck {

inline constexpr size_t kMaxMessageBytes = 8 << 10;  // a finding's message, fix, an incomplete run's reason
inline constexpr size_t kMaxLineBytes = 2 << 10;     // an evidence or consequence line, a step's message
inline constexpr size_t kMaxNameBytes = 512;         // a title, a frame, a file, a name
inline constexpr size_t kMaxEvidenceLines = 50;      // evidence and consequence lines of a finding
inline constexpr size_t kMaxFrames = 64;             // Python and host frames of a finding

// `text` cut to at most `limit` bytes, at a UTF-8 character boundary, with " ... (N more bytes)" when it was cut.
std::string Bounded(absl::string_view text, size_t limit);

// `report` with every text field and list cut as above. Cutting a report already cut changes nothing.
Report BoundedReport(Report report);

}  // namespace graphcheck

#endif  // GRAPHCHECK_REPORT_BOUNDED_H_
