// Events of the Python probe (python/probe): the probe calls graphcheck_probe_event and, under --shadow,
// graphcheck_probe_shadow (injection.cc) through ctypes, and the recorder writes them into the process's trace on its
// own clock and thread ids, so they interleave with the CUDA calls they explain. Exceptions come with the frames of
// their traceback (the raise site); every other event with the calling thread's Python stack, taken as for CUDA calls.
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "capture/internal/recorder_state.h"

namespace graphcheck::capture::internal {
namespace {

// Explicit frames as the probe sends them: "file\x1fline\x1ffunction" records joined by \x1e, innermost first.
constexpr char kFieldSeparator = '\x1f';
constexpr char kFrameSeparator = '\x1e';
constexpr size_t kMaxProbeText = 4096;  // bytes of a message kept (an exception text can hold a whole tensor)

}  // namespace

int Recorder::OnShadowComparison(const ShadowComparisonArgs& args) {
  if (writer_ == nullptr) return 0;
  trace::ShadowComparison comparison = args.figures;
  comparison.thread_id = CurrentThreadId();
  if (const CUptiResult r = cuptiGetTimestamp(&comparison.time_ns); r != CUPTI_SUCCESS) {
    CallFailed("cuptiGetTimestamp", r);
  }
  auto text = [&](const char* s) {
    return s == nullptr ? trace::StringId{0} : writer_->InternString(absl::string_view(s).substr(0, kMaxProbeText));
  };
  comparison.module_type = text(args.module_type);
  comparison.name = text(args.name);
  comparison.dtype = text(args.dtype);
  comparison.precision = text(args.precision);
  comparison.stack = CapturePythonStack();
  writer_->WriteShadowComparison(comparison);
  return 1;
}

int Recorder::OnProbeEvent(const ProbeEventArgs& args) {
  if (writer_ == nullptr || args.kind < 1 || args.kind > trace::kMaxProbeEventKind || args.origin < 0 ||
      args.origin > trace::kMaxProbeOrigin) {
    return 0;
  }
  trace::ProbeEvent event;
  event.kind = static_cast<trace::ProbeEventKind>(args.kind);
  event.origin = static_cast<trace::ProbeOrigin>(args.origin);
  event.thread_id = CurrentThreadId();
  if (const CUptiResult r = cuptiGetTimestamp(&event.time_ns); r != CUPTI_SUCCESS) CallFailed("cuptiGetTimestamp", r);
  event.graph = args.graph;
  event.pool = args.pool;
  event.value = args.value;
  event.value_now = args.value_now;
  auto text = [&](const char* s) {
    if (s == nullptr) return trace::StringId{0};
    const absl::string_view view(s);
    return writer_->InternString(view.substr(0, kMaxProbeText));
  };
  event.type = text(args.type);
  event.text = text(args.text);
  if (args.frames == nullptr) {
    event.stack = CapturePythonStack();
  } else {
    std::vector<trace::PythonFrameRef> frames;
    for (absl::string_view frame : absl::StrSplit(args.frames, kFrameSeparator, absl::SkipEmpty())) {
      if (frames.size() == kMaxPythonFrames) break;
      const std::vector<absl::string_view> fields = absl::StrSplit(frame, kFieldSeparator);
      if (fields.size() != 3) continue;
      uint32_t line = 0;
      if (!absl::SimpleAtoi(fields[1], &line)) line = 0;
      frames.push_back({writer_->InternString(fields[0]), line, writer_->InternString(fields[2])});
    }
    event.stack = writer_->AddPythonStack(frames);
  }
  writer_->WriteProbeEvent(event);
  return 1;
}

}  // namespace graphcheck::capture::internal
