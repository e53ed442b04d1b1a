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
  // Touch what analyzers touch: details and shapes by index, strings and backtraces by the ids the records carry.
  for (const auto& call : trace->api_calls) {
    const graphcheck::trace::CallDetail& detail = trace->Detail(call);
    (void)trace->String(detail.name);
    (void)trace->String(detail.kernel_name);
    (void)trace->FindBacktrace(detail.backtrace);
  }
  for (const auto& kernel : trace->kernels) (void)trace->String(trace->Shape(kernel).name);
  return 0;
}
