// Tests of the SARIF, Markdown and HTML renderers, fingerprints, baselines and the plot data in the JSON report:
// hostile program strings stay text and keep every format valid; fingerprints ignore what changes between runs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include <nlohmann/json.hpp>
#include <pugixml.hpp>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "core/fingerprint.h"
#include "report/baseline.h"
#include "report/finish.h"
#include "report/html.h"
#include "report/json.h"
#include "report/junit.h"
#include "report/markdown.h"
#include "report/sarif.h"
#include "report/text.h"

namespace graphcheck {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

// A kernel name, NVTX range and exception text as a hostile or broken program could produce them.
constexpr char kHostile[] = "<script>alert(\"x\")</script> ]]> a|b `c` *d* \xff\xfe end";

Finding PythonFinding() {
  Finding f;
  f.check_id = "sync-in-capture";
  f.severity = Severity::kError;
  f.title = "A synchronizing call ran during CUDA graph capture";
  f.message = "cudaStreamSynchronize waits for the GPU inside a capture (3 calls)";
  f.where.api = "cudaStreamSynchronize";
  f.where.torch_op = "aten::_local_scalar_dense";
  f.where.thread_id = 852;
  f.where.stream_id = 17;
  f.where.pid = 852;
  f.where.nvtx_path = "train_step/forward";
  f.where.backtrace = {"cudaStreamSynchronize+0x1a", "at::native::_local_scalar_dense_cuda()", "main"};
  f.where.python = {{"/usr/lib/python3/dist-packages/torch/_tensor.py", 1000, "Tensor.item", false},
                    {"train.py", 42, "train_step", true},
                    {"train.py", 90, "<module>", true}};
  f.fix = "Move .item() out of the captured region";
  return f;
}

Finding ConfigFinding() {
  Finding f;
  f.check_id = "config-te-rng-tracker";
  f.severity = Severity::kWarning;
  f.title = "TE RNG tracker";
  f.message = "set te_rng_tracker";
  f.where.file = "configs/megatron.yaml";
  f.where.line = 12;
  f.where.column = 3;
  f.where.key = "model.te_rng_tracker";
  return f;
}

Report SampleReport() {
  Report report;
  report.tool_version = "0.1.0";
  report.mode = "run";
  report.command = {"graphcheck", "run", "--", "python3", "train.py"};
  report.machine.hostname = "box";
  report.steps.push_back(Step{"program", StepStatus::kOk, 12.5, ""});
  report.checks_run = {"config-te-rng-tracker", "sync-in-capture"};
  report.findings = {PythonFinding(), ConfigFinding()};
  report.metrics = {{"launch.iteration_us", 1000, "us", "eager"},
                    {"graphed.iteration_us", 400, "us", "graphed"},
                    {"graphed.speedup", 2.5, "ratio", "speedup"}};
  Timeline timeline;
  timeline.process = "pid 852";
  timeline.run = {{"warmup", 0, 5000}, {"eager", 5000, 1000}, {"capture", 6000, 800}, {"graphed", 7000, 400}};
  StepTimeline eager{"eager step 1", 1000, 1000, {{"gemm", 7, 10, 50}, {"relu", 7, 70, 5}}, {{0, 8}, {60, 8}}, 0, 0};
  timeline.eager_step = eager;
  StepTimeline graphed{"graphed step 0", 400, 400, {{"gemm", 9, 5, 50}}, {{0, 3}}, 12, 0};
  timeline.graphed_step = graphed;
  timeline.kernel_durations = {{1, 2, 30}, {2, 5, 10}, {50, 100, 1}};
  report.timeline = timeline;
  FinishReport({}, &report);  // as every command finishes its report before rendering it
  return report;
}

// The report with kHostile in every string the program can supply.
Report HostileReport() {
  Report report = SampleReport();
  Finding& f = report.findings[0];
  f.message = kHostile;
  f.evidence = {kHostile};
  f.consequences = {kHostile};
  f.where.nvtx_path = kHostile;
  f.where.backtrace = {kHostile};
  f.where.python[1].file = kHostile;
  report.steps[0].message = kHostile;  // an exception text
  report.timeline->eager_step->kernels[0].name = kHostile;
  report.timeline->run[0].phase = kHostile;
  report.machine.hostname = kHostile;
  return report;
}

// Valid UTF-8: nlohmann's strict serializer throws on anything else.
bool IsValidUtf8(const std::string& s) {
  try {
    (void)json(s).dump();
    return true;
  } catch (const json::type_error&) {
    return false;
  }
}

TEST(FingerprintTest, IgnoresWhatChangesBetweenRuns) {
  const Finding f = PythonFinding();
  Finding other_run = f;
  other_run.where.pid = 9;
  other_run.where.thread_id = 10;
  other_run.where.stream_id = 11;
  other_run.message = "cudaStreamSynchronize waits for the GPU inside a capture (7 calls)";
  other_run.evidence = {"also in process 12"};
  other_run.where.backtrace[0] = "cudaStreamSynchronize+0x2b";
  EXPECT_EQ(FindingFingerprint(f), FindingFingerprint(other_run));
  EXPECT_THAT(FindingFingerprint(f), ::testing::MatchesRegex("[0-9a-f]{16}"));
}

TEST(FingerprintTest, ChangesWithTheProblem) {
  const Finding f = PythonFinding();
  Finding moved = f;
  moved.where.python[1].line = 43;
  Finding other_check = f;
  other_check.check_id = "unsafe-api-in-capture";
  Finding other_op = f;
  other_op.where.torch_op = "aten::nonzero";
  Finding other_key = ConfigFinding();
  other_key.where.key = "model.other";
  for (const Finding& changed : {moved, other_check, other_op}) {
    EXPECT_NE(FindingFingerprint(f), FindingFingerprint(changed));
  }
  EXPECT_NE(FindingFingerprint(ConfigFinding()), FindingFingerprint(other_key));
}

TEST(SarifTest, HasRulesLevelsFingerprintsLocationsAndTheCommandLine) {
  const json log = json::parse(RenderSarif(SampleReport(), nullptr));
  EXPECT_EQ(log["version"], "2.1.0");
  const json& run = log["runs"][0];
  EXPECT_EQ(run["tool"]["driver"]["name"], "graphcheck");
  EXPECT_EQ(run["tool"]["driver"]["version"], "0.1.0");
  EXPECT_EQ(run["invocations"][0]["commandLine"], "graphcheck run -- python3 train.py");
  const json& rules = run["tool"]["driver"]["rules"];
  ASSERT_EQ(rules.size(), 2u);
  EXPECT_EQ(rules[1]["id"], "sync-in-capture");
  EXPECT_THAT(rules[1]["help"]["text"].get<std::string>(), HasSubstr("graphcheck explain sync-in-capture"));
  // helpUri only when the build names where the check pages are published (an absolute URI or none).
  EXPECT_EQ(rules[1].contains("helpUri"), !CheckDocUri("sync-in-capture").empty());
  const json& python = run["results"][0];
  EXPECT_EQ(python["ruleId"], "sync-in-capture");
  EXPECT_EQ(python["ruleIndex"], 1);
  EXPECT_EQ(python["level"], "error");
  EXPECT_EQ(python["partialFingerprints"][kFingerprintKey], FindingFingerprint(PythonFinding()));
  // The first user frame, not the torch frame inside it.
  const json& physical = python["locations"][0]["physicalLocation"];
  EXPECT_EQ(physical["artifactLocation"]["uri"], "train.py");
  EXPECT_EQ(physical["region"]["startLine"], 42);
  const json& config = run["results"][1]["locations"][0]["physicalLocation"];
  EXPECT_EQ(config["artifactLocation"]["uri"], "configs/megatron.yaml");
  EXPECT_EQ(config["region"]["startLine"], 12);
  EXPECT_EQ(config["region"]["startColumn"], 3);
  EXPECT_EQ(run["results"][1]["level"], "warning");
}

TEST(HostileStringsTest, JsonStaysValidAndReadsBack) {
  const std::string text = ReportToJson(HostileReport());
  EXPECT_TRUE(IsValidUtf8(text));
  absl::StatusOr<Report> back = ReportFromJson(text);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_THAT(back->findings[0].message, HasSubstr("<script>alert(\"x\")</script> ]]>"));
}

TEST(HostileStringsTest, SarifStaysValid) {
  const std::string text = RenderSarif(HostileReport(), nullptr);
  EXPECT_TRUE(IsValidUtf8(text));
  const json log = json::parse(text);
  EXPECT_THAT(log["runs"][0]["results"][0]["message"]["text"].get<std::string>(), HasSubstr("<script>"));
  // A file name with spaces and markup is percent-encoded in the URI.
  EXPECT_THAT(
      log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].get<std::string>(),
      HasSubstr("%3Cscript%3E"));
}

TEST(HostileStringsTest, JunitStaysValidXml) {
  const std::string xml = RenderJunit(HostileReport(), FailOn::kError);
  EXPECT_TRUE(IsValidUtf8(xml));
  pugi::xml_document doc;
  ASSERT_TRUE(doc.load_string(xml.c_str())) << xml;
  EXPECT_THAT(std::string(doc.select_node("//failure").node().text().get()), HasSubstr("<script>"));
}

TEST(HostileStringsTest, HtmlShowsThemAsText) {
  const std::string html = RenderHtml(HostileReport());
  EXPECT_TRUE(IsValidUtf8(html));
  EXPECT_THAT(html, Not(HasSubstr("<script")));
  EXPECT_THAT(html, Not(HasSubstr("]]>")));
  // The document is well-formed XML whose text holds the strings verbatim: the serializer escaped them.
  pugi::xml_document doc;
  ASSERT_TRUE(doc.load_string(html.c_str())) << html;
  EXPECT_TRUE(doc.select_nodes("//script").empty());
  const std::string message = doc.select_node("//article/p").node().text().get();
  EXPECT_THAT(message, HasSubstr("<script>alert(\"x\")</script> ]]>"));
  EXPECT_THAT(message, HasSubstr("\xEF\xBF\xBD"));  // U+FFFD for the invalid bytes
  // The kernel's tooltip in the timeline, and an unknown phase does not become a CSS class.
  EXPECT_FALSE(doc.select_node("//*[local-name()='title'][contains(., '<script>')]").node().empty());
  EXPECT_TRUE(doc.select_node("//*[contains(@class, 'script')]").node().empty());
}

TEST(HostileStringsTest, MarkdownRendersThemAsText) {
  const std::string md = RenderMarkdown(HostileReport());
  EXPECT_TRUE(IsValidUtf8(md));
  EXPECT_THAT(md, Not(HasSubstr("<script")));
  EXPECT_THAT(md, HasSubstr("&lt;script&gt;"));
  // Every row of the findings table keeps its 4 cells: no '|' from the program splits one.
  for (absl::string_view line : absl::StrSplit(md, '\n')) {
    if (absl::StartsWith(line, "| error")) {
      EXPECT_EQ(std::count(line.begin(), line.end(), '|'), 5) << line;
    }
  }
}

// tests/fixtures/hostile_reports/strings.json: every string a program or a shared report can set (the check id, title,
// units, kernel names, ranks' hosts, the incomplete run's reason...) starts with a screen clear, a forged finding line,
// the C1 CSI and NEL, the line separators, the bidi override and marks, and a mention (make_corpus.py there).
Report FixtureReport(const std::string& name) {
  std::ifstream in(std::string(GRAPHCHECK_SOURCE_DIR) + "/tests/fixtures/hostile_reports/" + name);
  std::stringstream text;
  text << in.rdbuf();
  absl::StatusOr<Report> report = ReportFromJson(text.str());
  EXPECT_TRUE(report.ok()) << name << ": " << report.status();
  FinishReport({}, &*report);
  return *std::move(report);
}

// Every output graphcheck writes from a report, by name: each format, and a diff (as diff and --baseline print it)
// both ways.
std::map<std::string, std::string> EveryOutput(const Report& hostile, const Report& clean) {
  std::map<std::string, std::string> out = {
      {"text", RenderText(hostile, TextOptions{})},
      {"text in colour", RenderText(hostile, TextOptions{/*color=*/true})},
      {"markdown", RenderMarkdown(hostile)},
      {"html", RenderHtml(hostile)},
      {"junit", RenderJunit(hostile, FailOn::kError)},
      {"sarif", RenderSarif(hostile, nullptr)},
      {"json", ReportToJson(hostile)},
  };
  for (const auto& [name, diff] : {std::pair{"diff to hostile", DiffReports(clean, hostile, DefaultThresholds())},
                                   std::pair{"diff from hostile", DiffReports(hostile, clean, DefaultThresholds())}}) {
    out[absl::StrCat(name, " text")] = RenderDiffText(diff);
    out[absl::StrCat(name, " markdown")] = RenderDiffMarkdown(diff);
    out[absl::StrCat(name, " json")] = ReportDiffToJson(diff);
  }
  return out;
}

// A character XML 1.0 forbids, even as a character reference (pugixml decodes references without refusing them).
bool ForbiddenInXml(wchar_t c) {
  return !(c == 0x9 || c == 0xa || c == 0xd || (c >= 0x20 && c <= 0xd7ff) || (c >= 0xe000 && c <= 0xfffd) ||
           (c >= 0x10000 && c <= 0x10ffff));
}

void ExpectXml10(const std::string& xml) {
  pugi::xml_document doc;
  ASSERT_TRUE(doc.load_string(xml.c_str())) << xml;
  std::vector<std::string> values;
  for (pugi::xpath_node node : doc.select_nodes("//node()")) values.push_back(node.node().value());
  for (pugi::xpath_node node : doc.select_nodes("//@*")) values.push_back(node.attribute().value());
  for (const std::string& value : values) {
    for (wchar_t c : pugi::as_wide(value)) EXPECT_FALSE(ForbiddenInXml(c)) << std::hex << c << " in " << value;
  }
}

void ExpectNoForgedLine(absl::string_view out) {
  for (absl::string_view line : absl::StrSplit(out, '\n')) EXPECT_FALSE(absl::StartsWith(line, "error [forged]"));
}

TEST(HostileStringsTest, EveryFieldInEveryOutputStaysInert) {
  const Report hostile = FixtureReport("strings.json");
  ASSERT_TRUE(absl::StartsWith(hostile.findings.at(0).check_id, "\x1b[2J"));  // the fixture is hostile
  for (auto& [name, out] : EveryOutput(hostile, FixtureReport("clean.json"))) {
    SCOPED_TRACE(name);
    out = std::regex_replace(out, std::regex("\x1b\\[[0-9;]*m"), "");  // the palette's own colours
    EXPECT_THAT(out, HasSubstr("pwned"));                              // the hostile strings are there, made inert
    for (const std::string& raw :
         std::vector<std::string>{"\x1b", "\x07", "\x08", "\r", std::string(1, '\0'), "\x7f", "\xc2\x9b", "\xc2\x85",
                                  "\xe2\x80\xa8", "\xe2\x80\xa9", "\xe2\x80\xae", "\xe2\x80\x8f", "\xe2\x80\x8e"}) {
      EXPECT_THAT(out, Not(HasSubstr(raw))) << absl::CHexEscape(raw);
    }
    // The program's newline starts no line where lines mean something (HTML's do not, but for its <pre>).
    if (name != "html") ExpectNoForgedLine(out);
    if (absl::StrContains(name, "markdown")) EXPECT_THAT(out, Not(HasSubstr("@maintainers")));  // mentions nobody
  }
}

TEST(HostileStringsTest, HtmlPreformattedTextHasNoForgedLine) {
  pugi::xml_document doc;
  ASSERT_TRUE(doc.load_string(RenderHtml(FixtureReport("strings.json")).c_str()));
  for (pugi::xpath_node pre : doc.select_nodes("//pre")) ExpectNoForgedLine(pre.node().text().get());
}

TEST(HostileStringsTest, JunitIsXml10) {
  ExpectXml10(RenderJunit(FixtureReport("strings.json"), FailOn::kError));
  ExpectXml10(RenderJunit(FixtureReport("strings.json"), FailOn::kNever));
}

// tests/fixtures/hostile_reports/numbers.json holds 1e308 in every decimal (a sum of two is infinite, a share of two
// such sums NaN): every output a person reads prints each number short and finite-looking, never as 309 digits,
// "nan" or "inf". JSON and SARIF carry the numbers themselves.
TEST(HostileNumbersTest, EveryNumberIsShortInEveryOutput) {
  const std::regex long_number("[0-9]{21,}");
  const std::regex not_finite("(^|[^A-Za-z/])[-+]?(nan|inf)(%|[^A-Za-z/]|$)", std::regex::icase);
  for (const auto& [name, out] : EveryOutput(FixtureReport("numbers.json"), FixtureReport("clean.json"))) {
    if (name == "json" || name == "sarif" || absl::EndsWith(name, " json")) continue;
    std::smatch match;
    EXPECT_FALSE(std::regex_search(out, match, long_number)) << name << ": " << match.str();
    EXPECT_FALSE(std::regex_search(out, match, not_finite)) << name << ": " << match.str();
  }
}

TEST(HostileStringsTest, MarkdownMentionsNobody) {
  EXPECT_THAT(RenderMarkdown(FixtureReport("strings.json")), HasSubstr("@\u200Bmaintainers"));
}

// A report whose every count is 1, with `rows` tensors, coverage steps and ranks (one past a format's cap makes its
// "... and 1 more" line).
Report CountsOfOne(size_t rows) {
  Report report = FixtureReport("clean.json");
  report.findings.pop_back();  // one error, one warning, one note
  report.checks_run.resize(1);
  for (Finding& f : report.findings) f.where.backtrace = {"cudaStreamSynchronize"};
  Timeline& timeline = *report.timeline;
  timeline.eager_step->kernels.resize(1);
  timeline.eager_step->dropped_kernels = 0;
  timeline.graphed_step->kernels.clear();
  timeline.graphed_step->dropped_kernels = 1;
  timeline.graphed_step->dropped_launches = 1;
  timeline.kernel_durations = {{1, 2, 1}};
  timeline.dropped_run_steps = 1;
  Coverage& coverage = *report.coverage;
  StepCoverage step = coverage.steps.at(0);
  step.eager_kernels = 1;
  for (CoverageShare& share : step.graphed) share.kernels = 1;
  coverage.total = step;
  coverage.steps.assign(rows, step);
  coverage.dropped_steps = 1;
  coverage.more_remainders = 1;
  report.numerics.assign(rows, report.numerics.at(0));
  const RankResult rank = report.ranks.at(0);
  report.ranks.clear();
  for (size_t i = 0; i < rows; ++i) report.ranks.push_back(rank), report.ranks.back().rank = i;
  return report;
}

// No "1 errors", "1 kernels", "1 more steps" in any output.
TEST(CountsTest, OneOfAnythingIsSingularInEveryOutput) {
  const std::regex one_with_plural(
      "(^|[^0-9.,])1 (more |later )?(error|warning|note|check|kernel|frame|step|tensor|call site|rank|metric|launch "
      "call|finding)s\\b");
  // Text and Markdown show 10 tensors; text 10, Markdown 20 and HTML 200 coverage steps; HTML 16 ranks.
  for (size_t rows : {11, 17, 21, 201}) {
    const Report report = CountsOfOne(rows);
    Report moved = report;
    moved.metrics.at(0).value *= 2;
    const ReportDiff diff = DiffReports(report, moved, DefaultThresholds());
    for (const auto& [name, out] : std::map<std::string, std::string>{{"text", RenderText(report, TextOptions{})},
                                                                      {"markdown", RenderMarkdown(report)},
                                                                      {"html", RenderHtml(report)},
                                                                      {"junit", RenderJunit(report, FailOn::kError)},
                                                                      {"diff text", RenderDiffText(diff)},
                                                                      {"diff markdown", RenderDiffMarkdown(diff)}}) {
      std::smatch match;
      EXPECT_FALSE(std::regex_search(out, match, one_with_plural)) << rows << " rows, " << name << ": " << match.str();
    }
  }
}

TEST(MarkdownTest, VerdictTableAndKeyMetrics) {
  const std::string md = RenderMarkdown(SampleReport());
  EXPECT_THAT(md, HasSubstr("Not capturable: A synchronizing call ran during CUDA graph capture (sync-in-capture)"));
  EXPECT_THAT(md, HasSubstr("| error | `sync-in-capture` |"));
  EXPECT_THAT(md, HasSubstr("train.py:42 in train\\_step"));
  EXPECT_THAT(md, HasSubstr("| `graphed.speedup` | 2.500 ratio |"));
  EXPECT_EQ(MarkdownText(std::string(500, 'a'), 10), "aaaaaaaaaa...");
}

TEST(HtmlTest, VerdictPlotsAndFoldedBacktrace) {
  const std::string html = RenderHtml(SampleReport());
  pugi::xml_document doc;
  ASSERT_TRUE(doc.load_string(html.c_str()));
  EXPECT_THAT(doc.select_node("//section[contains(@class, 'verdict')]/p").node().text().get(),
              HasSubstr("Not capturable"));
  EXPECT_EQ(doc.select_nodes("//figure/*[local-name()='svg']").size(), 4u);
  EXPECT_FALSE(doc.select_node("//details/pre[contains(., 'at::native::_local_scalar_dense_cuda()')]").node().empty());
  EXPECT_FALSE(doc.select_node("//dd[. = 'train.py:42 in train_step']").node().empty());
  // The graphed step's 12 kernels beyond the cap are said, not silently lost.
  EXPECT_FALSE(doc.select_node("//p[contains(., '12 kernels')]").node().empty());
}

TEST(TextTest, ShowsTheUserFrameThenThePythonStack) {
  const std::string text = RenderText(SampleReport(), TextOptions{});
  EXPECT_THAT(text, HasSubstr("where: train.py:42 in train_step, call cudaStreamSynchronize"));
  EXPECT_THAT(text, HasSubstr("    py train.py:42 in train_step\n"));
  EXPECT_LT(text.find("py train.py:90"), text.find("#0 cudaStreamSynchronize"));
}

TEST(ReportJsonTest, TimelineAndPythonFramesRoundTrip) {
  const Report report = SampleReport();
  absl::StatusOr<Report> back = ReportFromJson(ReportToJson(report));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->findings, report.findings);
  ASSERT_TRUE(back->timeline.has_value());
  EXPECT_EQ(*back->timeline, *report.timeline);
  const json j = json::parse(ReportToJson(report));
  EXPECT_EQ(j["findings"][0]["where"]["python"][1]["file"], "train.py");
  EXPECT_EQ(j["findings"][0]["fingerprint"], FindingFingerprint(report.findings[0]));
}

TEST(BaselineTest, NewGoneAndRegressedMetrics) {
  const Report old_report = SampleReport();
  Report new_report = SampleReport();
  new_report.findings.erase(new_report.findings.begin() + 1);  // the config finding was fixed
  Finding fresh = PythonFinding();
  fresh.where.torch_op = "aten::nonzero";
  new_report.findings.push_back(fresh);
  new_report.metrics[2].value = 2.0;   // speedup -20%
  new_report.metrics[0].value = 1050;  // eager step +5%: within 10%
  const ReportDiff diff = DiffReports(old_report, new_report, DefaultThresholds());
  ASSERT_EQ(diff.appeared.size(), 1u);
  EXPECT_EQ(diff.appeared[0].where.torch_op, "aten::nonzero");
  ASSERT_EQ(diff.gone.size(), 1u);
  EXPECT_EQ(diff.gone[0].check_id, "config-te-rng-tracker");
  ASSERT_EQ(diff.moved.size(), 2u);
  EXPECT_FALSE(diff.moved[0].regression);
  EXPECT_TRUE(diff.moved[1].regression);
  std::vector<std::string> reasons;
  EXPECT_EQ(ExitCodeForDiff(diff, FailOn::kError, &reasons), 1);
  ASSERT_EQ(reasons.size(), 2u);
  EXPECT_THAT(reasons[0], HasSubstr("new error [sync-in-capture]"));
  EXPECT_THAT(reasons[1], HasSubstr("graphed.speedup 2.5 -> 2"));
  EXPECT_THAT(RenderDiffText(diff), HasSubstr("  - warning [config-te-rng-tracker]"));
}

// A metric that was 0 has no relative change to give: "from 0", never "+0.0%" (which reads as no change).
TEST(BaselineTest, AChangeFromZeroSaysFromZero) {
  Report old_report = SampleReport();
  Report new_report = SampleReport();
  old_report.metrics[0].value = 0;
  const ReportDiff diff = DiffReports(old_report, new_report, DefaultThresholds());
  EXPECT_THAT(RenderDiffText(diff), HasSubstr("(from 0)"));
  EXPECT_THAT(RenderDiffMarkdown(diff), HasSubstr("| from 0 |"));
  EXPECT_THAT(RenderDiffText(diff), Not(HasSubstr("+0.0%")));
}

// Counts agree with their nouns: "1 error", "1 warning", "1 check".
TEST(TextTest, CountsAgreeWithTheirNouns) {
  Report report = SampleReport();
  report.findings.resize(1);
  report.checks_run = {"sync-in-capture"};
  const std::string text = RenderText(report, TextOptions{});
  EXPECT_THAT(text, HasSubstr("1 check ran: 1 error, 0 warnings, 0 notes"));
  EXPECT_THAT(RenderMarkdown(report), HasSubstr("**1 error, 0 warnings, 0 notes** from 1 check."));
}

TEST(BaselineTest, SameReportPassesAndThresholdsParse) {
  const ReportDiff diff = DiffReports(SampleReport(), SampleReport(), DefaultThresholds());
  std::vector<std::string> reasons;
  EXPECT_EQ(ExitCodeForDiff(diff, FailOn::kWarning, &reasons), 0);
  EXPECT_TRUE(diff.appeared.empty() && diff.gone.empty() && diff.moved.empty());
  absl::StatusOr<MetricThreshold> t = ParseThreshold("graphed.speedup=25%");
  ASSERT_TRUE(t.ok());
  EXPECT_DOUBLE_EQ(t->max_ratio, 0.25);
  EXPECT_FALSE(ParseThreshold("graphed.speedup").ok());
  EXPECT_FALSE(ParseThreshold("=5%").ok());
  EXPECT_TRUE(HigherIsBetter("rank0.graphed.speedup"));
  EXPECT_FALSE(HigherIsBetter("launch.iteration_us"));
}

TEST(DiffJsonTest, CarriesFingerprintsAndRegressions) {
  Report new_report = SampleReport();
  new_report.metrics[2].value = 1.0;
  const json j = json::parse(ReportDiffToJson(DiffReports(SampleReport(), new_report, DefaultThresholds())));
  EXPECT_EQ(j["schema"], kDiffSchema);
  EXPECT_EQ(j["moved"][0]["name"], "graphed.speedup");
  EXPECT_EQ(j["moved"][0]["regression"], true);
}

}  // namespace
}  // namespace graphcheck
