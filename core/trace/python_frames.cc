#include "core/trace/python_frames.h"

#include <algorithm>
#include <limits>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace graphcheck::trace {

bool IsProbeFile(absl::string_view file) {
  return absl::StrContains(file, "/graphcheck_probe/") || absl::EndsWith(file, "graphcheck_probe.py");
}

bool IsUserPythonFile(absl::string_view file) {
  if (file.empty() || absl::StartsWith(file, "<frozen")) return false;
  // torchinductor_ folders hold the code torch.compile generated, not the program's own.
  for (absl::string_view library :
       {"/site-packages/", "/dist-packages/", "/torch/", "/torchinductor_", "graphcheck_probe", "/sitecustomize.py"}) {
    if (absl::StrContains(file, library)) return false;
  }
  // The standard library: .../lib/python3.X/... (its site-packages were excluded above).
  const size_t lib = file.find("/python3.");
  return lib == absl::string_view::npos ||
         !(absl::EndsWith(file.substr(0, lib), "/lib") || absl::EndsWith(file.substr(0, lib), "/lib64"));
}

std::vector<SourceFrame> PythonFrames(const Trace& trace, PythonStackId id) {
  std::vector<SourceFrame> frames;
  const PythonStack* stack = trace.FindPythonStack(id);
  if (stack == nullptr) return frames;
  for (const PythonFrameRef& ref : stack->frames) {
    if (IsProbeFile(trace.String(ref.file))) continue;
    SourceFrame& frame = frames.emplace_back();
    frame.file = std::string(trace.String(ref.file));
    frame.line = static_cast<int>(std::min<uint32_t>(ref.line, std::numeric_limits<int>::max()));
    frame.function = std::string(trace.String(ref.function));
    frame.user = IsUserPythonFile(frame.file);
  }
  return frames;
}

std::string RaisedAt(const std::vector<SourceFrame>& frames) {
  if (frames.empty()) return "";
  const SourceFrame* user = FirstUserFrame(frames);
  const SourceFrame& frame = user != nullptr ? *user : frames.front();
  return absl::StrCat(frame.file, ":", frame.line, " in ", frame.function);
}

std::string CapturedAt(const Trace& trace, uint64_t graph) {
  for (const ProbeEvent& event : trace.probe_events) {
    if (event.kind != ProbeEventKind::kCaptureBegin || event.graph != graph) continue;
    const std::string site = RaisedAt(trace::PythonFrames(trace, event.stack));
    return site.empty() ? "" : absl::StrCat(" (captured at ", site, ")");
  }
  return "";
}

}  // namespace graphcheck::trace
