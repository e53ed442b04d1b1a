// The graph-coverage section in every report format, through JSON and back, and its metrics in baselines.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <pugixml.hpp>

#include "report/baseline.h"
#include "report/coverage_table.h"
#include "report/html.h"
#include "report/json.h"
#include "report/markdown.h"
#include "report/text.h"

namespace graphcheck {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

Coverage MixedCoverage() {
  Coverage c;
  c.process = "pid 7";
  c.scope = "2 steps with kernel records (graphed steps 1-2; steps from NVTX range 'step')";
  c.steps_counted = 2;
  c.total = {"all", 2, 20, {{"make_graphed_callables", 6, 60}, {"user", 2, 20}}};
  c.steps = {{"graphed step 1", 1, 10, {{"make_graphed_callables", 3, 30}, {"user", 1, 10}}},
             {"graphed step 2", 1, 10, {{"make_graphed_callables", 3, 30}, {"user", 1, 10}}}};
  EagerRemainder r;
  r.kernel = "attention <fp16>";
  r.where.api = "cudaLaunchKernel";
  r.where.thread_id = 1;
  r.where.python = {{"/home/me/train.py", 40, "step", true}};
  r.launches = 2;
  r.steps = 2;
  r.gpu_us = 20;
  r.reason = "failed-capture";
  r.detail = "launched in a capture that failed: sync-in-capture at model.py:18 in forward";
  r.reason_where.python = {{"/home/me/model.py", 18, "forward", true}};
  c.remainders = {r};
  return c;
}

Report CoverageReport() {
  Report report;
  report.tool_version = "0.1.0";
  report.mode = "analyze";
  report.coverage = MixedCoverage();
  return report;
}

TEST(CoverageReportTest, HeadlineSaysTheSharesByOriginAndTheScope) {
  const std::vector<std::string> headline = CoverageHeadline(MixedCoverage());
  ASSERT_EQ(headline.size(), 2u);
  EXPECT_THAT(headline[0], HasSubstr("80.0% of the GPU time and 80.0% of the kernels ran as CUDA graph replays"));
  EXPECT_THAT(headline[0], HasSubstr("make_graphed_callables 60.0%, user 20.0%"));
  EXPECT_THAT(headline[1], HasSubstr("graphed steps 1-2"));
}

TEST(CoverageReportTest, NothingCountedSaysSoWithoutFigures) {
  Coverage c;
  c.scope = "no step has kernel records; 3 steps without kernel records left out";
  c.steps_without_records = 3;
  const std::string text = CoverageText(c, 10);
  EXPECT_THAT(text, HasSubstr("not computed: no step has kernel records"));
  EXPECT_THAT(text, Not(HasSubstr("%")));
}

TEST(CoverageReportTest, EveryFormatShowsIt) {
  const Report report = CoverageReport();
  const std::string text = RenderText(report, TextOptions());
  EXPECT_THAT(text, HasSubstr("coverage: graph replays against kernels launched one by one"));
  EXPECT_THAT(text, HasSubstr("graphed step 2"));
  EXPECT_THAT(text, HasSubstr("failed-capture"));
  EXPECT_THAT(text, HasSubstr("train.py:40 in step"));
  const std::string markdown = RenderMarkdown(report);
  EXPECT_THAT(markdown, HasSubstr("**CUDA graph coverage:** 80.0% of the GPU time"));
  EXPECT_THAT(markdown, HasSubstr("Largest eager remainders"));
  const std::string html = RenderHtml(report);
  EXPECT_THAT(html, HasSubstr("CUDA graph coverage"));
  pugi::xml_document doc;
  ASSERT_TRUE(doc.load_string(html.c_str()));
  // The stacked bars: one rectangle per origin and one for the eager part, per step.
  EXPECT_EQ(doc.select_nodes("//*[local-name()='rect'][contains(@class,'cov-make_graphed_callables')]").size(), 3u);
  EXPECT_EQ(doc.select_nodes("//*[local-name()='rect'][contains(@class,'cov-eager')]").size(), 3u);
}

// One reason shared by several call sites is written once; the rows after it say "as above".
TEST(CoverageReportTest, AReasonSharedByRowsIsWrittenOnce) {
  Coverage c = MixedCoverage();
  c.remainders.push_back(c.remainders[0]);
  c.remainders[1].kernel = "softmax <fp16>";
  const CellTable table = MakeRemainderTable(c);
  ASSERT_EQ(table.rows.size(), 2u);
  EXPECT_EQ(table.rows[0].back(), c.remainders[0].detail);
  EXPECT_EQ(table.rows[1].back(), "as above");
}

TEST(CoverageReportTest, RoundTripsThroughJson) {
  const Report report = CoverageReport();
  const absl::StatusOr<Report> back = ReportFromJson(ReportToJson(report));
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_TRUE(back->coverage);
  EXPECT_EQ(*back->coverage, *report.coverage);
}

TEST(CoverageReportTest, ADropInCoverageIsARegression) {
  EXPECT_TRUE(HigherIsBetter("coverage.graphed_gpu_time_share"));
  EXPECT_TRUE(HigherIsBetter("rank0.coverage.graphed_kernel_share.user"));
  EXPECT_FALSE(HigherIsBetter("coverage.eager_gpu_us"));
  Report before, after;
  before.metrics = {{"coverage.graphed_gpu_time_share", 0.8, "ratio", ""}};
  after.metrics = {{"coverage.graphed_gpu_time_share", 0.6, "ratio", ""}};
  const ReportDiff diff = DiffReports(before, after, DefaultThresholds());
  ASSERT_EQ(diff.moved.size(), 1u);
  EXPECT_TRUE(diff.moved[0].regression);
  EXPECT_FALSE(DiffReports(after, before, DefaultThresholds()).moved[0].regression);
}

}  // namespace
}  // namespace graphcheck
