// libFuzzer target for the stderr-message table: any program output, split into lines as `graphcheck run` splits it,
// goes through the stderr-messages check and the folding into trace findings, and the findings render as text and
// as well-formed JUnit XML whatever bytes the program printed.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include <pugixml.hpp>

#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "checks/analyze.h"
#include "cli/catalog.h"
#include "report/output.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace graphcheck;  // NOLINT
  const std::vector<std::string> lines =
      absl::StrSplit(absl::string_view(reinterpret_cast<const char*>(data), size), '\n');
  static const CheckSelection kAll = *CheckSelection::Parse("");
  static const CheckOptions kDefaults;
  const checks::AnalysisResult result = checks::AnalyzeTraces({}, &lines, BuiltinChecks(), kAll, kDefaults);
  Report report;
  report.findings = result.findings;
  report.checks_run = result.checks_run;
  RenderOptions options;
  (void)RenderReport(report, options);
  options.format = ReportFormat::kJunit;
  if (!pugi::xml_document().load_string(RenderReport(report, options).c_str())) std::abort();
  return 0;
}
