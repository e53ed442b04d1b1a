#include "checks/trace/probe_findings.h"

#include <optional>
#include <set>

#include "absl/strings/str_cat.h"
#include "analysis/python_probe.h"
#include "trace/python_frames.h"

namespace graphcheck::checks {

using analysis::AddLibraryAdvice;
using analysis::CaptureWindow;
using analysis::DescribeCapture;
using analysis::DescribeOrigin;
using analysis::ExceptionDetails;
using analysis::ExceptionText;
using analysis::ProbeEventLocation;
using analysis::ProbeIndex;
using analysis::PythonException;
using analysis::TraceAnalysis;

void ReportPythonExceptions(const TraceAnalysis& analysis, const Finding& prototype, std::vector<Finding>* findings) {
  const trace::Trace& trace = analysis.trace();
  const ProbeIndex& probe = analysis.probe();
  for (const PythonException& exception : probe.exceptions()) {
    if (!exception.reported || exception.check_id != prototype.check_id) continue;
    const trace::PythonExceptionRecord& event = exception.record;
    Finding finding = prototype;
    if (exception.rule != nullptr) finding.severity = exception.rule->severity;
    finding.where = ProbeEventLocation(trace, event.at);
    const std::string text = ExceptionText(event);
    const std::string meaning = exception.rule != nullptr ? exception.rule->meaning : "";
    if (!event.in_capture) {
      finding.message = absl::StrCat("The program stopped on ", text, meaning.empty() ? "" : ": ", meaning, ".");
    } else {
      const trace::ProbeOrigin origin =
          exception.begin != nullptr ? exception.begin->at.origin : trace::ProbeOrigin::kUnknown;
      const std::string capture = exception.window
                                      ? DescribeCapture(trace, analysis.captures().windows()[*exception.window])
                                      : std::string("a capture whose CUDA capture never began");
      finding.message =
          absl::StrCat(text, " left ", capture, ", begun by ", DescribeOrigin(origin), ": ",
                       meaning.empty() ? "the capture failed in Python, before any CUDA call did" : meaning, ".");
      if (exception.window) finding.where.stream_id = analysis.captures().windows()[*exception.window].stream_id;
    }
    if (const std::string at = trace::RaisedAt(finding.where.python); !at.empty()) {
      finding.evidence.push_back(absl::StrCat(event.type, " raised ", at));
    }
    // A known message's further lines are its details (Megatron's argument mismatches, with the shapes).
    if (exception.rule != nullptr) {
      for (std::string& line : ExceptionDetails(event.message)) finding.evidence.push_back(std::move(line));
    }
    // What the same capture raised after it (capture_end failing because the body did).
    for (const PythonException& later : probe.exceptions()) {
      if (later.record.at.event > event.at.event && exception.begin != nullptr && later.begin == exception.begin) {
        finding.consequences.push_back(absl::StrCat("then ", ExceptionText(later.record)));
      }
    }
    finding.fix = exception.rule != nullptr
                      ? exception.rule->fix
                      : "Fix what raised inside the captured region (the frames show where), or move it out of the "
                        "capture; a capture that raises leaves no graph.";
    AddLibraryAdvice(&finding);
    findings->push_back(std::move(finding));
  }
}

std::vector<std::string> ExceptionEvidence(const TraceAnalysis& analysis, size_t window) {
  const trace::Trace& trace = analysis.trace();
  std::vector<std::string> lines;
  for (const PythonException& exception : analysis.probe().exceptions()) {
    if (exception.reported || exception.window != window) continue;
    std::string line = absl::StrCat("the program saw ", ExceptionText(exception.record));
    if (const std::string at = trace::RaisedAt(trace::PythonFrames(trace, exception.record.at.stack)); !at.empty()) {
      absl::StrAppend(&line, " (raised ", at, ")");
    }
    lines.push_back(std::move(line));
  }
  return lines;
}

bool ReplayedAfter(const TraceAnalysis& analysis, uint64_t graph, uint64_t time_ns) {
  const trace::Trace& trace = analysis.trace();
  const std::vector<CaptureWindow>& windows = analysis.captures().windows();
  std::set<uint64_t> cuda_graphs;
  for (size_t w = 0; w < windows.size(); ++w) {
    const trace::CaptureBegin* begin = analysis.probe().Begin(w);
    if (begin != nullptr && begin->graph == graph && windows[w].end_call) {
      cuda_graphs.insert(trace.Detail(trace.api_calls[*windows[w].end_call]).graph_id);
    }
  }
  for (const trace::ApiCall& call : trace.api_calls) {
    if (call.kind == trace::ApiKind::kGraphLaunch && call.start_ns > time_ns &&
        cuda_graphs.count(trace.Detail(call).graph_id) != 0) {
      return true;
    }
  }
  return false;
}

}  // namespace graphcheck::checks
