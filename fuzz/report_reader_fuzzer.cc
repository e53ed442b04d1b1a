// libFuzzer target for `graphcheck report FILE.json` and `graphcheck diff`: any bytes either fail to parse as a report
// (a status, never a crash) or render in every format, and what renders must be well formed: JSON that reads back as
// the same report, JUnit XML that parses, SARIF that is JSON.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include <nlohmann/json.hpp>
#include <pugixml.hpp>

#include "absl/strings/string_view.h"
#include "report/baseline.h"
#include "report/json.h"
#include "report/output.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace graphcheck;  // NOLINT
  absl::StatusOr<Report> report = ReportFromJson(absl::string_view(reinterpret_cast<const char*>(data), size));
  if (!report.ok()) return 0;
  for (ReportFormat format : {ReportFormat::kText, ReportFormat::kJson, ReportFormat::kJunit, ReportFormat::kSarif,
                              ReportFormat::kMarkdown, ReportFormat::kHtml}) {
    RenderOptions options;
    options.format = format;
    const std::string text = RenderReport(*report, options);
    if (format == ReportFormat::kJson && !ReportFromJson(text).ok()) std::abort();
    if (format == ReportFormat::kSarif && !nlohmann::json::accept(text)) std::abort();
    if (format == ReportFormat::kJunit && !pugi::xml_document().load_string(text.c_str())) std::abort();
  }
  (void)DiffReports(*report, *report, {});
  return 0;
}
