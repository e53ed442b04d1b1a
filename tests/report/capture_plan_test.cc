// graphcheck plan's four formats (report/capture_plan.h), from a plan made by hand.
#include "report/capture_plan.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <regex>

namespace graphcheck {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

CapturePlan TwoSetPlan() {
  CapturePlan plan;
  plan.subject = "serve.gctrace";
  RegionPlan& region = plan.regions.emplace_back();
  region.region = "Net at serve.py:10 in serve";
  region.calls = 300;
  region.dimension = "0 dim 0";
  region.pays_off = true;
  region.verdict = "Capture 4 graphs, for 0 dim 0 8, 16, 32, 64.";
  for (int64_t size : {8, 16, 32, 64}) {
    PlanSize& s = region.sizes.emplace_back();
    s.size = size;
    s.calls = 75;
    s.eager_us = 100;
    s.gpu_busy_us = size;
    s.nodes = 40;
    s.measured = size != 16;
    s.pool_bytes = static_cast<uint64_t>(size) << 20;
  }
  for (const char* name : {"few", "balanced"}) {
    BucketSet& set = region.sets.emplace_back();
    set.name = name;
    set.buckets = name == std::string("few") ? std::vector<int64_t>{32, 64} : std::vector<int64_t>{8, 16, 32, 64};
    set.calls_covered = 1;
    set.padding_share = 0.125;
    set.private_pools_bytes = 120u << 20;
    set.shared_pool_bytes = 70u << 20;
    set.capture_us = 2500;
    set.saving_per_call_us = 42.5;
    set.saving_per_step_us = 42.5;
    set.saving_share = 0.425;
  }
  plan.notes = {"1 size had no call inside a launch-recording window"};
  plan.model = {"a graphed call takes ..."};
  return plan;
}

TEST(CapturePlanReportTest, TextHasEachRegionsVerdictSetsAndSizes) {
  const std::string text = RenderCapturePlan(TwoSetPlan(), ReportFormat::kText);
  EXPECT_THAT(text, HasSubstr("graphcheck plan: serve.gctrace"));
  EXPECT_THAT(text, HasSubstr("Capture 4 graphs"));
  EXPECT_THAT(text, HasSubstr("300 calls, 4 sizes of 0 dim 0"));
  EXPECT_THAT(text, HasSubstr("8, 16, 32, 64"));
  EXPECT_THAT(text, HasSubstr("42.5 us"));
  EXPECT_THAT(text, HasSubstr("120 MiB"));
  EXPECT_THAT(text, HasSubstr("16.0 us (nearest)"));  // a size whose GPU figures are a neighbour's
}

// "1 call, 1 size" and "... and 1 less called size" in every format, never "1 calls" or "1 sizes".
TEST(CapturePlanReportTest, OneOfAnythingIsSingular) {
  CapturePlan one = TwoSetPlan();
  one.regions[0].calls = 1;
  one.regions[0].sizes.resize(1);
  CapturePlan one_left_out = TwoSetPlan();  // the tables show 30 sizes: one more is left out
  for (int64_t size = 100; size < 127; ++size) one_left_out.regions[0].sizes.push_back({size, 1});
  const std::regex one_with_plural("(^|[^0-9.,])1 (less called )?(call|size)s\\b");
  for (const CapturePlan& plan : {one, one_left_out}) {
    for (ReportFormat format : {ReportFormat::kText, ReportFormat::kMarkdown, ReportFormat::kHtml}) {
      const std::string out = RenderCapturePlan(plan, format);
      std::smatch match;
      EXPECT_FALSE(std::regex_search(out, match, one_with_plural)) << match.str() << " in\n" << out;
    }
  }
  EXPECT_THAT(RenderCapturePlan(one, ReportFormat::kText), HasSubstr("1 call, 1 size of 0 dim 0"));
  EXPECT_THAT(RenderCapturePlan(one_left_out, ReportFormat::kText), HasSubstr("... and 1 less called size (JSON"));
}

TEST(CapturePlanReportTest, JsonHoldsEveryFigure) {
  const nlohmann::json json = nlohmann::json::parse(RenderCapturePlan(TwoSetPlan(), ReportFormat::kJson));
  EXPECT_EQ(json["subject"], "serve.gctrace");
  const nlohmann::json& region = json["regions"][0];
  EXPECT_EQ(region["calls"], 300);
  EXPECT_EQ(region["sizes"].size(), 4u);
  EXPECT_EQ(region["sizes"][1]["measured"], false);
  EXPECT_EQ(region["sets"][1]["buckets"], nlohmann::json({8, 16, 32, 64}));
  EXPECT_DOUBLE_EQ(region["sets"][0]["saving_per_call_us"].get<double>(), 42.5);
  EXPECT_EQ(region["sets"][0]["shared_pool_bytes"], 70u << 20);
}

TEST(CapturePlanReportTest, MarkdownAndHtmlEscapeTheProgramsText) {
  CapturePlan plan = TwoSetPlan();
  plan.regions[0].region = "Net|<script>\xE2\x80\xAE at serve.py:10";
  const std::string markdown = RenderCapturePlan(plan, ReportFormat::kMarkdown);
  EXPECT_THAT(markdown, HasSubstr("| balanced |"));
  EXPECT_THAT(markdown, Not(HasSubstr("<script>")));
  EXPECT_THAT(markdown, Not(HasSubstr("\xE2\x80\xAE")));
  const std::string html = RenderCapturePlan(plan, ReportFormat::kHtml);
  EXPECT_THAT(html, HasSubstr("<table>"));
  EXPECT_THAT(html, HasSubstr("&lt;script&gt;"));
  EXPECT_THAT(html, Not(HasSubstr("\xE2\x80\xAE")));
}

}  // namespace
}  // namespace graphcheck
