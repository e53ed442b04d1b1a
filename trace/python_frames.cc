#include "trace/python_frames.h"

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

std::vector<size_t> FramesToKeep(const std::vector<absl::string_view>& files, size_t max) {
  std::vector<size_t> keep;
  if (files.size() <= max) {
    for (size_t i = 0; i < files.size(); ++i) keep.push_back(i);
    return keep;
  }
  const size_t inner = std::min(kInnermostFramesKept, max);
  for (size_t i = 0; i < inner; ++i) keep.push_back(i);
  std::vector<size_t> program;
  for (size_t i = inner; i < files.size(); ++i) {
    if (IsUserPythonFile(files[i])) program.push_back(i);
  }
  const size_t budget = max - inner;
  const size_t from = program.size() > budget ? program.size() - budget : 0;
  keep.insert(keep.end(), program.begin() + from, program.end());
  return keep;
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

std::string PackageOf(absl::string_view file) {
  for (absl::string_view packages : {"/site-packages/", "/dist-packages/"}) {
    const size_t at = file.find(packages);
    if (at == absl::string_view::npos) continue;
    const absl::string_view rest = file.substr(at + packages.size());
    return std::string(rest.substr(0, rest.find_first_of("/.")));
  }
  if (absl::StrContains(file, "/torch/")) return "torch";
  return "";
}

std::string ProgramSite(const std::vector<SourceFrame>& frames) {
  if (frames.empty()) return "";
  const SourceFrame* user = FirstUserFrame(frames);
  const SourceFrame& frame = user != nullptr ? *user : frames.front();
  return absl::StrCat(frame.file, ":", frame.line, " in ", frame.function);
}

LibrarySite ThirdPartySite(const std::vector<SourceFrame>& frames) {
  for (const SourceFrame& frame : frames) {
    if (frame.user) break;
    const std::string package = PackageOf(frame.file);
    if (package.empty() || package == "torch") continue;
    return {package, absl::StrCat(package, " (", frame.file.substr(frame.file.rfind('/') + 1), ":", frame.line, ")")};
  }
  return {};
}

std::string RaisedAt(const std::vector<SourceFrame>& frames) {
  if (frames.empty()) return "";
  const LibrarySite library = ThirdPartySite(frames);
  if (library.package.empty()) return absl::StrCat("at ", ProgramSite(frames));
  return FirstUserFrame(frames) != nullptr ? absl::StrCat("in ", library.where, ", called from ", ProgramSite(frames))
                                           : absl::StrCat("in ", library.where);
}

std::string CapturedAt(const Trace& trace, uint64_t graph) {
  for (const ProbeEvent& event : trace.probe_events) {
    if (event.kind != ProbeEventKind::kCaptureBegin || event.graph != graph) continue;
    const std::string site = ProgramSite(PythonFrames(trace, event.stack));
    return site.empty() ? "" : absl::StrCat(" (captured at ", site, ")");
  }
  return "";
}

}  // namespace graphcheck::trace
