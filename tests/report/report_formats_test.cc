// Tests of the report renderers: JSON round trip, JUnit well-formedness, text escaping, and the exit-code policy.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <pugixml.hpp>

#include "core/exit_code.h"
#include "core/file_io.h"
#include "report/finish.h"
#include "report/html.h"
#include "report/json.h"
#include "report/junit.h"
#include "report/markdown.h"
#include "report/output.h"
#include "report/policy.h"
#include "report/text.h"

namespace graphcheck {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

Report SampleReport() {
  Report report;
  report.tool_version = "0.1.0";
  report.mode = "run";
  report.command = {"graphcheck", "run", "--", "python", "train.py"};
  report.machine.hostname = "box";
  report.machine.gpu = GpuInfo{"NVIDIA H100", 9, 0, "13.0"};
  report.steps.push_back(Step{"program", StepStatus::kFailed, 12.5, "killed by signal 11 (SIGSEGV)"});
  report.checks_run = {"sync-in-capture", "env-launch-blocking"};
  Finding f;
  f.check_id = "sync-in-capture";
  f.severity = Severity::kError;
  f.title = "synchronizing call during capture";
  f.message = "kernel <\"evil\"> & \x1b[31mred\x1b[0m";
  f.evidence = {"return code 900"};
  f.consequences = {"capture end returned 901"};
  f.where.api = "cudaStreamSynchronize";
  f.where.thread_id = 42;
  f.where.stream_id = 7;
  f.where.pid = 1234;
  f.where.nvtx_path = "step/forward";
  f.where.backtrace = {"at::native::_local_scalar_dense_cuda()", "main"};
  f.where.torch_op = "aten::_local_scalar_dense";
  f.fix = "move .item() out of the captured region";
  report.findings.push_back(f);
  Finding note;
  note.check_id = "env-launch-blocking";
  note.severity = Severity::kWarning;
  note.message = "CUDA_LAUNCH_BLOCKING=1";
  note.where.file = "cfg.yaml";
  note.where.line = 3;
  note.where.column = 5;
  note.where.key = "env.CUDA_LAUNCH_BLOCKING";
  report.findings.push_back(note);
  report.metrics.push_back(Metric{"launch.kernels_per_iteration", 42, "count", "kernels", {}});
  FinishReport({}, &report);  // as every command finishes its report before rendering it
  return report;
}

TEST(ReportJsonTest, RoundTripsEveryField) {
  const Report report = SampleReport();
  absl::StatusOr<Report> back = ReportFromJson(ReportToJson(report));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->tool_version, report.tool_version);
  EXPECT_EQ(back->mode, report.mode);
  EXPECT_EQ(back->command, report.command);
  EXPECT_EQ(back->machine.hostname, "box");
  ASSERT_TRUE(back->machine.gpu.has_value());
  EXPECT_EQ(*back->machine.gpu, *report.machine.gpu);
  EXPECT_EQ(back->steps, report.steps);
  EXPECT_EQ(back->checks_run, report.checks_run);
  EXPECT_EQ(back->findings, report.findings);
  EXPECT_EQ(back->metrics, report.metrics);
}

TEST(ReportJsonTest, RejectsBadInputWithAReason) {
  EXPECT_THAT(ReportFromJson("{").status().message(), HasSubstr("not valid JSON"));
  EXPECT_THAT(ReportFromJson("[]").status().message(), HasSubstr("not a graphcheck report"));
  EXPECT_THAT(ReportFromJson(R"({"schema":"other/1"})").status().message(), HasSubstr("schema"));
  EXPECT_THAT(ReportFromJson(R"({"schema":"graphcheck.report/1","tool_version":1})").status().message(),
              HasSubstr("not a valid graphcheck report"));
}

// A report's stored exit code is graphcheck's own (`graphcheck report` exits with it again): 77, 124, 255, 3.7 or
// 1e10 are not, and the report is refused as bad input rather than passed through.
TEST(ReportJsonTest, AnIncompleteRunsExitCodeIsOneOfGraphchecks) {
  Report report = SampleReport();
  report.incomplete = Incomplete{3, "no GPU"};
  const std::string json = ReportToJson(report);
  ASSERT_TRUE(ReportFromJson(json).ok());
  EXPECT_EQ(ReportFromJson(json)->incomplete->exit_code, 3);
  for (const char* code : {"77", "124", "137", "255", "0", "-1", "3.7", "1e10"}) {
    std::string bad = json;
    const size_t at = bad.find("\"exit_code\": 3");
    ASSERT_NE(at, std::string::npos) << json;
    bad.replace(at, std::string("\"exit_code\": 3").size(), std::string("\"exit_code\": ") + code);
    const absl::StatusOr<Report> read = ReportFromJson(bad);
    EXPECT_FALSE(read.ok()) << code;
    EXPECT_THAT(read.status().message(), HasSubstr("not one of graphcheck's failing exit codes")) << code;
  }
}

TEST(ReportJsonTest, InvalidUtf8FromTheProgramDoesNotThrow) {
  Report report = SampleReport();
  report.findings[0].message = std::string("bad \xff\xfe utf8");
  const std::string json = ReportToJson(report);
  EXPECT_TRUE(ReportFromJson(json).ok());
}

TEST(JunitTest, IsWellFormedWithOneTestcasePerCheck) {
  const std::string xml = RenderJunit(SampleReport(), FailOn::kError);
  pugi::xml_document doc;
  ASSERT_TRUE(doc.load_string(xml.c_str())) << xml;
  pugi::xml_node suite = doc.child("testsuites").child("testsuite");
  EXPECT_EQ(suite.attribute("tests").as_int(), 2);
  EXPECT_EQ(suite.attribute("failures").as_int(), 1);
  pugi::xml_node sync = suite.find_child_by_attribute("testcase", "name", "sync-in-capture");
  ASSERT_TRUE(sync);
  EXPECT_THAT(std::string(sync.child("failure").text().get()), HasSubstr("kernel <\"evil\">"));
  pugi::xml_node env = suite.find_child_by_attribute("testcase", "name", "env-launch-blocking");
  ASSERT_TRUE(env);
  EXPECT_FALSE(env.child("failure"));  // a warning does not fail with --fail-on error
  EXPECT_TRUE(env.child("system-out"));
}

TEST(JunitTest, WarningsFailWithFailOnWarning) {
  pugi::xml_document doc;
  ASSERT_TRUE(doc.load_string(RenderJunit(SampleReport(), FailOn::kWarning).c_str()));
  EXPECT_EQ(doc.child("testsuites").child("testsuite").attribute("failures").as_int(), 2);
}

// The text report, the default format, opens with the verdict line the HTML and Markdown reports open with.
TEST(TextTest, OpensWithTheVerdict) {
  const std::string text = RenderText(SampleReport(), TextOptions{});
  EXPECT_EQ(text.substr(0, text.find('\n')),
            "graphcheck run: Not capturable: synchronizing call during capture (sync-in-capture)");
}

TEST(TextTest, ShowsWhereAndEscapesTerminalControls) {
  const std::string text = RenderText(SampleReport(), TextOptions{});
  EXPECT_THAT(text, HasSubstr("error [sync-in-capture]"));
  EXPECT_THAT(text, HasSubstr("call cudaStreamSynchronize"));
  EXPECT_THAT(text, HasSubstr("op aten::_local_scalar_dense"));
  EXPECT_THAT(text, HasSubstr("cfg.yaml:3:5"));
  EXPECT_THAT(text, HasSubstr("#0 at::native::_local_scalar_dense_cuda()"));
  EXPECT_THAT(text, HasSubstr("\\x1b[31m"));
  EXPECT_THAT(text, Not(HasSubstr("\x1b")));  // no colour when not asked, and none smuggled in
  EXPECT_THAT(RenderText(SampleReport(), TextOptions{true, 6}), HasSubstr("\x1b[1;31merror"));
}

// Program text (a message, a Python file name) can neither start a line of its own in the text report (a forged
// finding) nor reorder what a reader sees (U+202E RIGHT-TO-LEFT OVERRIDE) in any output meant for people.
TEST(EscapingTest, ProgramTextCannotForgeALineOrReverseADisplay) {
  Report report = SampleReport();
  constexpr char kOverride[] = "\xE2\x80\xAE";  // U+202E
  report.findings[0].message = "fine\nerror [fake-check] forged finding";
  report.findings[0].where.python.push_back(
      SourceFrame{std::string("/home/me/") + kOverride + "yp.niart", 7, "f", true});
  const std::string text = RenderText(report, TextOptions{});
  EXPECT_THAT(text, Not(HasSubstr("\nerror [fake-check]")));
  EXPECT_THAT(text, HasSubstr("fine\\nerror [fake-check] forged finding"));
  EXPECT_THAT(text, HasSubstr("\\u202E"));
  for (const std::string& out :
       {text, RenderHtml(report), RenderMarkdown(report), RenderJunit(report, FailOn::kError)}) {
    EXPECT_THAT(out, Not(HasSubstr(kOverride)));
  }
}

TEST(PolicyTest, ExitCodesFollowFailOn) {
  Report report = SampleReport();
  EXPECT_EQ(ExitCodeForReport(report, FailOn::kError), kExitFindings);
  EXPECT_EQ(ExitCodeForReport(report, FailOn::kNever), kExitClean);
  report.findings.erase(report.findings.begin());  // only the warning is left
  EXPECT_EQ(ExitCodeForReport(report, FailOn::kError), kExitClean);
  EXPECT_EQ(ExitCodeForReport(report, FailOn::kWarning), kExitFindings);
  EXPECT_FALSE(ParseFailOn("sometimes").ok());
}

TEST(OutputTest, WritesWholeFilesAndReportsUnreadableOnes) {
  const std::string path = ::testing::TempDir() + "/report.json";
  ASSERT_TRUE(WriteOutput(path, "{}\n").ok());
  EXPECT_EQ(*ReadInputFile(path, kReportInput), "{}\n");
  EXPECT_EQ(ReadInputFile(::testing::TempDir() + "/missing.json", kReportInput).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(ReadInputFile(::testing::TempDir(), kReportInput).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(WriteOutput("/nonexistent-dir/x.json", "{}").ok());
  // A device is written in place, never renamed over.
  ASSERT_TRUE(WriteOutput("/dev/null", "{}\n").ok());
  struct stat info;
  ASSERT_EQ(stat("/dev/null", &info), 0);
  EXPECT_TRUE(S_ISCHR(info.st_mode));
}

}  // namespace
}  // namespace graphcheck
