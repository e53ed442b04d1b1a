// What CI relies on in every rendered format: SARIF results that all have a location (relative to the source root
// where they can be), a run that did not complete never reading as clean, and reports of any number of findings
// rendered within fixed caps with an "and N more" line.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "core/exit_code.h"
#include "report/bounded.h"
#include "report/finish.h"
#include "report/html.h"
#include "report/json.h"
#include "report/junit.h"
#include "report/limits.h"
#include "report/markdown.h"
#include "report/output.h"
#include "report/policy.h"
#include "report/sarif.h"
#include "report/text.h"

namespace graphcheck {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

Finding FindingAt(const std::string& check_id, const std::string& file) {
  Finding f;
  f.check_id = check_id;
  f.severity = Severity::kError;
  f.title = check_id;
  f.message = "a problem";
  if (!file.empty()) f.where.python = {{file, 7, "step", true}};
  return f;
}

Report BaseReport() {
  Report report;
  report.tool_version = "0.1.0";
  report.mode = "analyze";
  report.command = {"graphcheck", "analyze", "traces/run.gctrace"};
  return report;
}

TEST(SarifLocationsTest, EveryResultHasOneRelativeToTheSourceRootWherePossible) {
  Report report = BaseReport();
  report.subject = "/repo/traces/run.gctrace";
  report.findings = {FindingAt("sync-in-capture", "train.py"), FindingAt("sync-in-capture", "/repo/src/model.py"),
                     FindingAt("sync-in-capture", "/usr/lib/python3/x.py"), FindingAt("launch-bound", "")};
  report.findings[1].occurrences = 12;
  const json run = json::parse(RenderSarif(report, nullptr, SarifPaths{"/repo", "/repo/sub", ""}))["runs"][0];
  EXPECT_EQ(run["originalUriBaseIds"]["%SRCROOT%"]["uri"], "file:///repo/");
  const json& results = run["results"];
  ASSERT_EQ(results.size(), 4u);
  for (const json& result : results) {
    ASSERT_TRUE(result.contains("locations")) << result.dump();
    EXPECT_TRUE(result["locations"][0]["physicalLocation"]["artifactLocation"].contains("uri")) << result.dump();
  }
  auto artifact = [&](size_t i) { return results[i]["locations"][0]["physicalLocation"]["artifactLocation"]; };
  EXPECT_EQ(artifact(0), json({{"uri", "sub/train.py"}, {"uriBaseId", "%SRCROOT%"}}));  // from the working directory
  EXPECT_EQ(artifact(1), json({{"uri", "src/model.py"}, {"uriBaseId", "%SRCROOT%"}}));
  EXPECT_EQ(results[1]["occurrenceCount"], 12);
  EXPECT_EQ(artifact(2), json({{"uri", "file:///usr/lib/python3/x.py"}}));  // outside the repository: absolute
  // A finding without a line of its own points at the file the run was about.
  EXPECT_EQ(artifact(3), json({{"uri", "traces/run.gctrace"}, {"uriBaseId", "%SRCROOT%"}}));
  // Every result has a region with a start line, as code scanning's ingestion wants: the line, else the first.
  for (const json& result : results) {
    EXPECT_GE(result["locations"][0]["physicalLocation"]["region"]["startLine"].get<int>(), 1) << result.dump();
  }
  EXPECT_EQ(results[0]["locations"][0]["physicalLocation"]["region"]["startLine"], 7);
}

// A linted flag's "<command line>" is no file: the result points at the file the run was about instead.
TEST(SarifLocationsTest, ACommandLineIsNotAFile) {
  Report report = BaseReport();
  report.subject = "/repo/megatron.yaml";
  Finding f = FindingAt("config-static-shapes", "");
  f.where.file = "<command line>";
  f.where.key = "--cuda-graph-scope";
  report.findings = {f};
  const json run = json::parse(RenderSarif(report, nullptr, SarifPaths{"/repo", "/repo", ""}))["runs"][0];
  const json& location = run["results"][0]["locations"][0];
  EXPECT_EQ(location["physicalLocation"]["artifactLocation"]["uri"], "megatron.yaml");
  EXPECT_EQ(location["logicalLocations"][0]["fullyQualifiedName"], "--cuda-graph-scope");
}

TEST(SarifLocationsTest, AReportThatNamesNoFilePointsAtTheDefaultArtifact) {
  Report report = BaseReport();
  report.findings = {FindingAt("launch-bound", "")};
  const json run = json::parse(RenderSarif(report, nullptr, SarifPaths{"/repo", "/repo", "/repo/k.json"}))["runs"][0];
  EXPECT_EQ(run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"], "k.json");
}

Report IncompleteReport() {
  Report report = BaseReport();
  report.mode = "check";
  report.steps = {{"engine", StepStatus::kSkipped, 0, "no GPU"}};
  report.incomplete = Incomplete{kExitEnvironmentMissing, "only the static checks ran; the model needs a GPU"};
  FinishReport({}, &report);  // as every command finishes its report before rendering it
  return report;
}

TEST(IncompleteRunTest, NoFormatReadsItAsClean) {
  const Report report = IncompleteReport();
  EXPECT_EQ(ExitCodeForReport(report, FailOn::kNever), kExitEnvironmentMissing);
  const std::string markdown = RenderMarkdown(report);
  EXPECT_THAT(markdown, HasSubstr("The run did not complete (exit 3)"));
  EXPECT_THAT(markdown, Not(HasSubstr("No capture blocker found")));
  EXPECT_THAT(RenderText(report, TextOptions()), HasSubstr("the run did not complete (exit 3)"));
  EXPECT_THAT(RenderHtml(report), HasSubstr("verdict incomplete"));
  EXPECT_THAT(RenderJunit(report, FailOn::kError), HasSubstr("<error message=\"only the static checks ran"));
  const json invocation = json::parse(RenderSarif(report, nullptr))["runs"][0]["invocations"][0];
  EXPECT_EQ(invocation["executionSuccessful"], false);
  EXPECT_EQ(invocation["exitCode"], 3);
}

TEST(IncompleteRunTest, SurvivesTheJsonRoundTrip) {
  Report report = IncompleteReport();
  report.findings = {FindingAt("sync-in-capture", "train.py")};
  report.findings[0].occurrences = 1000000;
  absl::StatusOr<Report> back = ReportFromJson(ReportToJson(report));
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_TRUE(back->incomplete.has_value());
  EXPECT_EQ(*back->incomplete, *report.incomplete);
  EXPECT_EQ(back->findings[0].occurrences, 1000000u);
}

// 100,000 findings at 100,000 call sites (after folding, what a huge program could still produce).
Report HugeReport() {
  Report report = BaseReport();
  report.findings.reserve(100000);
  for (int i = 0; i < 100000; ++i) {
    Finding f = FindingAt("sync-in-capture", absl::StrCat("/repo/src/file", i, ".py"));
    f.message = absl::StrCat("cudaStreamSynchronize waits for the GPU inside a capture, call ", i);
    f.fix = "Move the synchronization out of the captured region.";
    report.findings.push_back(std::move(f));
  }
  return report;
}

TEST(ReportLimitsTest, EveryRenderedFormatIsCappedWithACount) {
  const Report report = HugeReport();
  const std::string sarif = RenderSarif(report, nullptr, SarifPaths{"/repo", "/repo", ""});
  EXPECT_LT(sarif.size(), 10u << 20);  // upload-sarif's limit
  const json run = json::parse(sarif)["runs"][0];
  EXPECT_EQ(run["results"].size(), kMaxSarifResults);
  EXPECT_EQ(run["invocations"][0]["toolExecutionNotifications"][0]["message"]["text"],
            MoreFindingsLine(100000 - kMaxSarifResults));

  const std::string text = RenderText(report, TextOptions());
  EXPECT_THAT(text, HasSubstr(MoreFindingsLine(100000 - kMaxFindingsShown)));
  EXPECT_LT(text.size(), 2u << 20);
  const std::string html = RenderHtml(report);
  EXPECT_THAT(html, HasSubstr(MoreFindingsLine(100000 - kMaxFindingsShown)));
  EXPECT_LT(html.size(), 4u << 20);
  const std::string markdown = RenderMarkdown(report);
  EXPECT_THAT(markdown, HasSubstr(MoreFindingsLine(100000 - 50)));
  EXPECT_LT(markdown.size(), 64u << 10);  // a merge-request comment
  const std::string junit = RenderJunit(report, FailOn::kError);
  EXPECT_THAT(junit, HasSubstr(MoreFindingsLine(100000 - kMaxFindingsPerTestcase)));
  EXPECT_LT(junit.size(), 1u << 20);
}

TEST(ReportLimitsTest, LargeFindingsKeepTheSarifFileUnderTheUploadLimit) {
  Report report = BaseReport();
  for (int i = 0; i < 20000; ++i) {
    Finding f = FindingAt("sync-in-capture", absl::StrCat("/repo/src/file", i, ".py"));
    f.where.backtrace.assign(40, std::string(60, 'f'));  // 2.4 KB of frames each: 5,000 would be 12 MB
    report.findings.push_back(std::move(f));
  }
  const std::string sarif = RenderSarif(report, nullptr, SarifPaths{"/repo", "/repo", ""});
  EXPECT_LE(sarif.size(), kMaxSarifBytes);
  const json run = json::parse(sarif)["runs"][0];
  const size_t kept = run["results"].size();
  EXPECT_GT(kept, 0u);
  EXPECT_LT(kept, kMaxSarifResults);
  EXPECT_EQ(run["invocations"][0]["toolExecutionNotifications"][0]["message"]["text"],
            MoreFindingsLine(report.findings.size() - kept));
}

// Every format RenderReport writes, with what one rendering of `report` made in each.
std::vector<std::pair<ReportFormat, std::string>> EveryFormat(const Report& report) {
  std::vector<std::pair<ReportFormat, std::string>> outputs;
  for (ReportFormat format : {ReportFormat::kText, ReportFormat::kJson, ReportFormat::kJunit, ReportFormat::kSarif,
                              ReportFormat::kMarkdown, ReportFormat::kHtml}) {
    RenderOptions options;
    options.format = format;
    outputs.emplace_back(format, RenderReport(report, options));
  }
  return outputs;
}

// Caps by size, not only by count: a 100 MB message, a 1 MB Python function name and a 2M-step timeline (whatever a
// report file claims) make outputs under 10 MB in every format, the cut fields say so, and SARIF keeps the error.
TEST(ReportLimitsTest, EveryFormatIsBoundedBySizeAndKeepsTheError) {
  Report report = BaseReport();
  Finding error = FindingAt("sync-in-capture", "/repo/train.py");
  error.message = std::string(100 << 20, 'm');
  error.where.python[0].function = std::string(1 << 20, 'f');
  report.findings.push_back(error);
  Finding note = FindingAt("launch-bound", "/repo/train.py");
  note.severity = Severity::kNote;
  report.findings.insert(report.findings.begin(), note);  // a report read back may list a note first
  report.timeline = Timeline{};
  report.timeline->run.resize(2000000, RunStepTime{"eager", 0, 1});
  for (const auto& [format, output] : EveryFormat(report)) {
    SCOPED_TRACE(static_cast<int>(format));
    EXPECT_LT(output.size(), 10u << 20);
    // Markdown's table cells are cut shorter still, with "...".
    if (format != ReportFormat::kJunit) {
      EXPECT_THAT(output, HasSubstr(format == ReportFormat::kMarkdown ? "m..." : "more bytes)"));
    }
  }
  const json sarif = json::parse(EveryFormat(report)[3].second)["runs"][0];
  ASSERT_EQ(sarif["results"].size(), 2u);
  EXPECT_EQ(sarif["results"][0]["level"], "error");
  const Report bounded = BoundedReport(report);
  EXPECT_EQ(bounded.timeline->run.size(), kMaxTimelineRunSteps);
  EXPECT_EQ(bounded.timeline->dropped_run_steps, 2000000 - kMaxTimelineRunSteps);
  EXPECT_EQ(bounded.findings[0].severity, Severity::kError);
  EXPECT_EQ(BoundedReport(bounded).findings[0].message, bounded.findings[0].message);  // a saved report re-rendered
}

TEST(ReportLimitsTest, ACutKeepsWholeCharacters) {
  const std::string text =
      "ab\xC3\xA9"
      "cd";                                              // "abécd"
  EXPECT_EQ(Bounded(text, 3), "ab ... (4 more bytes)");  // not half of é
  EXPECT_EQ(Bounded(text, 64), text);
  EXPECT_EQ(Bounded("abcd", 3), "abc ... (1 more byte)");
}

}  // namespace
}  // namespace graphcheck
