// The one-line verdict at the top of the HTML and Markdown reports: can the step be captured, and if not, why; and
// what graphs saved (measured on graphed steps) or would save (the forecast from eager steps).
#ifndef GRAPHCHECK_REPORT_VERDICT_H_
#define GRAPHCHECK_REPORT_VERDICT_H_

#include <optional>
#include <string>

#include "core/report.h"

namespace graphcheck {

// kIncomplete: the run stopped before its checks could run (Report::incomplete); nothing is known about capture.
enum class Capturability { kBlocked, kCaptured, kNoBlockerFound, kIncomplete };

struct Verdict {
  Capturability capturability = Capturability::kNoBlockerFound;
  std::string headline;  // "Not capturable: A synchronizing call ran during CUDA graph capture (sync-in-capture)"
  std::string saving;    // "Graphed steps took 812.0 us against 1203.5 us eager: x1.48"; "" when nothing was timed
};

Verdict ComputeVerdict(const Report& report);

// The first metric named `name`, or "rank<R>.name" / "pid<P>.name" for a multi-process report.
std::optional<double> FindMetric(const Report& report, const std::string& name);

}  // namespace graphcheck

#endif  // GRAPHCHECK_REPORT_VERDICT_H_
