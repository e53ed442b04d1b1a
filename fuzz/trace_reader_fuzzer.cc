// libFuzzer target for the trace reader and the analysis that `graphcheck analyze` runs on what it read: any bytes
// must read and analyze without a crash, a sanitizer report or a runaway allocation, and every reader warning must
// name an offset. Seeds: fuzz/make_trace_seeds (scripts/fuzz-tests.sh writes them).
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "checks/analyze.h"
#include "cli/catalog.h"
#include "trace/trace_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace graphcheck;  // NOLINT
  absl::StatusOr<trace::Trace> trace =
      trace::ReadTraceFromBytes(absl::string_view(reinterpret_cast<const char*>(data), size));
  if (!trace.ok()) return 0;
  for (const std::string& warning : trace->read_warnings) {
    if (!absl::StartsWith(warning, "offset ")) std::abort();
  }
  static const CheckSelection kAll = *CheckSelection::Parse("");
  static const CheckOptions kDefaults;
  checks::AnalyzeTraces({&*trace}, nullptr, BuiltinChecks(), kAll, kDefaults);
  return 0;
}
