#include "capture/backtrace.h"

#include <dlfcn.h>
#include <execinfo.h>

#include <vector>

#include "absl/debugging/symbolize.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace graphcheck::capture {
namespace {

// Frames inside these objects are the recorder's own machinery, not the program's.
bool IsToolObject(const char* path) {
  return path != nullptr && (absl::StrContains(path, "graphcheck_inject") || absl::StrContains(path, "libcupti") ||
                             absl::StrContains(path, "libcuda.so"));
}

}  // namespace

trace::StringId BacktraceRecorder::FrameName(trace::TraceWriter* writer, void* pc) {
  auto [it, inserted] = frames_.try_emplace(pc, 0);
  if (!inserted) return it->second;
  char symbol[1024];
  // pc - 1: a return address points after the call; the call's line is the one before.
  void* lookup = static_cast<char*>(pc) - 1;
  std::string name;
  if (absl::Symbolize(lookup, symbol, sizeof(symbol))) {
    name = symbol;
  } else {
    Dl_info info;
    name = dladdr(lookup, &info) != 0 && info.dli_fname != nullptr
               ? absl::StrCat(info.dli_fname, "+0x",
                              absl::Hex(reinterpret_cast<uintptr_t>(pc) - reinterpret_cast<uintptr_t>(info.dli_fbase)))
               : absl::StrCat("0x", absl::Hex(reinterpret_cast<uintptr_t>(pc)));
  }
  it->second = writer->InternString(name);
  return it->second;
}

trace::BacktraceId BacktraceRecorder::Capture(trace::TraceWriter* writer) {
  void* pcs[kMaxFrames];
  const int depth = backtrace(pcs, kMaxFrames);
  absl::MutexLock lock(&mutex_);
  int first = 0;
  for (; first < depth; ++first) {
    auto [it, inserted] = is_tool_frame_.try_emplace(pcs[first], false);
    if (inserted) {
      Dl_info info;
      it->second = dladdr(pcs[first], &info) != 0 && IsToolObject(info.dli_fname);
    }
    if (!it->second) break;
  }
  std::vector<trace::StringId> frames;
  for (int i = first; i < depth && static_cast<int>(frames.size()) < kKeptFrames; ++i) {
    frames.push_back(FrameName(writer, pcs[i]));
  }
  return writer->AddBacktrace(frames);
}

}  // namespace graphcheck::capture
