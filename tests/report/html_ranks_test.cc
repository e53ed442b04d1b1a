// Golden test of the HTML report's ranks side by side (a distributed job): a column per rank, its process and
// captures, and its own value of each metric where the ranks differ.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <pugixml.hpp>

#include "report/html.h"
#include "report/json.h"

namespace graphcheck {
namespace {

Report TwoRankJob() {
  Report report;
  report.tool_version = "0.1.0";
  report.mode = "analyze";
  report.metrics = {{"launch.iteration_us", 3184, "us", "median over 2 ranks"}};
  report.ranks = {{0, 852, "node-a", 2, 2, {{"launch.iteration_us", 3184, "us", ""}, {"launch.gpu_busy_us", 900, "us", ""}}},
                  {1, 853, "node-b", 3, 2, {{"launch.iteration_us", 25300, "us", ""}}}};
  return report;
}

// The rows of the table of class `cls`, each as its cells' texts.
std::vector<std::vector<std::string>> TableRows(const std::string& html, const std::string& cls) {
  pugi::xml_document doc;
  EXPECT_TRUE(doc.load_string(html.c_str()));
  std::vector<std::vector<std::string>> rows;
  const pugi::xml_node table = doc.select_node(("//table[@class='" + cls + "']").c_str()).node();
  for (pugi::xml_node row : table.children("tr")) {
    std::vector<std::string> cells;
    for (pugi::xml_node cell : row.children()) cells.emplace_back(cell.text().get());
    rows.push_back(std::move(cells));
  }
  return rows;
}

TEST(HtmlRanksTest, ShowsTheRanksSideBySide) {
  const std::vector<std::vector<std::string>> expected = {
      {"", "rank 0", "rank 1"},
      {"host, pid", "node-a, 852", "node-b, 853"},
      {"captures (graphs made)", "2 (2)", "3 (2)"},
      {"launch.iteration_us (us)", "3184", "2.53e+04"},
      {"launch.gpu_busy_us (us)", "900", "-"},
  };
  EXPECT_EQ(TableRows(RenderHtml(TwoRankJob()), "ranks"), expected);
}

TEST(HtmlRanksTest, OneProcessHasNoRanksTableAndTheRanksSurviveJson) {
  Report one = TwoRankJob();
  one.ranks.resize(1);
  EXPECT_THAT(RenderHtml(one), ::testing::Not(::testing::HasSubstr("Ranks side by side")));
  absl::StatusOr<Report> back = ReportFromJson(ReportToJson(TwoRankJob()));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->ranks, TwoRankJob().ranks);
}

}  // namespace
}  // namespace graphcheck
