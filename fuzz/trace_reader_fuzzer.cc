// libFuzzer target for the trace reader: any bytes must read without a crash, a sanitizer report or a runaway
// allocation, and every warning must name an offset. Seed it with real traces (graphcheck run) or the unit tests'.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "core/trace/trace_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::StatusOr<graphcheck::trace::Trace> trace =
      graphcheck::trace::ReadTraceFromBytes(absl::string_view(reinterpret_cast<const char*>(data), size));
  if (!trace.ok()) return 0;
  for (const std::string& warning : trace->read_warnings) {
    if (!absl::StartsWith(warning, "offset ")) std::abort();
  }
  // Touch what analyzers touch: string and backtrace lookups by the ids the records carry.
  for (const auto& call : trace->api_calls) {
    (void)trace->String(call.name);
    (void)trace->FindBacktrace(call.backtrace);
  }
  return 0;
}
