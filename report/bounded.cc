// Bounds a report's fields and lists before rendering (bounded.h).
#include "report/bounded.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/plural.h"

namespace graphcheck {
namespace {

// Room for the cut marker: a text cut once is within limit + kMarkerRoom, so cutting again (a report rendered, saved
// as JSON and rendered again) leaves it as it is.
constexpr size_t kMarkerRoom = 40;

void Cut(std::string* text, size_t limit) {
  if (text->size() > limit + kMarkerRoom) *text = Bounded(*text, limit);
}

// Keeps the first `limit` items of `items`, counting the rest in `dropped` (when the list has such a counter).
template <typename T>
void CutList(std::vector<T>* items, size_t limit, uint64_t* dropped = nullptr) {
  if (items->size() <= limit) return;
  if (dropped != nullptr) *dropped += items->size() - limit;
  items->resize(limit);
}

// Evidence-like lines: at most kMaxEvidenceLines of kMaxLineBytes, the last one saying how many more there were.
void CutLines(std::vector<std::string>* lines) {
  for (std::string& line : *lines) Cut(&line, kMaxLineBytes);
  if (lines->size() <= kMaxEvidenceLines) return;
  const size_t more = lines->size() - (kMaxEvidenceLines - 1);
  lines->resize(kMaxEvidenceLines - 1);
  lines->push_back(absl::StrCat("... and ", more, " more"));
}

void CutLocation(Location* where) {
  for (std::string* field : {&where->api, &where->nvtx_path, &where->torch_op, &where->file, &where->key}) {
    Cut(field, kMaxNameBytes);
  }
  CutList(&where->backtrace, kMaxFrames);
  for (std::string& frame : where->backtrace) Cut(&frame, kMaxNameBytes);
  CutList(&where->python, kMaxFrames);
  for (SourceFrame& frame : where->python) {
    Cut(&frame.file, kMaxNameBytes);
    Cut(&frame.function, kMaxNameBytes);
  }
}

void CutFinding(Finding* finding) {
  Cut(&finding->check_id, kMaxNameBytes);
  Cut(&finding->title, kMaxNameBytes);
  Cut(&finding->message, kMaxMessageBytes);
  Cut(&finding->fix, kMaxMessageBytes);
  CutLines(&finding->evidence);
  CutLines(&finding->consequences);
  CutLocation(&finding->where);
}

void CutStepTimeline(StepTimeline* step) {
  Cut(&step->label, kMaxNameBytes);
  CutList(&step->kernels, kMaxStepKernels, &step->dropped_kernels);
  CutList(&step->launches, kMaxStepLaunches, &step->dropped_launches);
  for (TimelineKernel& kernel : step->kernels) Cut(&kernel.name, kMaxLineBytes);  // C++ templates run long
}

void CutCoverage(Coverage* coverage) {
  CutList(&coverage->steps, kMaxCoverageSteps, &coverage->dropped_steps);
  CutList(&coverage->remainders, kMaxCoverageRemainders, &coverage->more_remainders);
  for (EagerRemainder& remainder : coverage->remainders) {
    Cut(&remainder.kernel, kMaxLineBytes);
    Cut(&remainder.detail, kMaxLineBytes);
    CutLocation(&remainder.where);
    CutLocation(&remainder.reason_where);
  }
}

}  // namespace

std::string Bounded(absl::string_view text, size_t limit) {
  if (text.size() <= limit) return std::string(text);
  size_t end = limit;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;  // not inside a character
  return absl::StrCat(text.substr(0, end), " ... (", Plural(text.size() - end, "more byte", "more bytes"), ")");
}

Report BoundedReport(Report report) {
  // Most severe first (as the checks leave them; a report read back may be in any order), so that a renderer's count
  // cap never drops an error for a note.
  std::stable_sort(report.findings.begin(), report.findings.end(),
                   [](const Finding& a, const Finding& b) { return a.severity > b.severity; });
  for (Finding& finding : report.findings) CutFinding(&finding);
  for (Step& step : report.steps) {
    Cut(&step.name, kMaxNameBytes);
    Cut(&step.message, kMaxLineBytes);
  }
  for (Metric& metric : report.metrics) {
    Cut(&metric.name, kMaxNameBytes);
    Cut(&metric.description, kMaxLineBytes);
  }
  for (std::string& arg : report.command) Cut(&arg, kMaxLineBytes);
  if (report.incomplete) Cut(&report.incomplete->reason, kMaxMessageBytes);
  if (report.timeline) {
    CutList(&report.timeline->run, kMaxTimelineRunSteps, &report.timeline->dropped_run_steps);
    CutList(&report.timeline->kernel_durations, kMaxHistogramBuckets);
    if (report.timeline->eager_step) CutStepTimeline(&*report.timeline->eager_step);
    if (report.timeline->graphed_step) CutStepTimeline(&*report.timeline->graphed_step);
  }
  if (report.coverage) CutCoverage(&*report.coverage);
  return report;
}

}  // namespace graphcheck
