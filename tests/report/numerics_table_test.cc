// The numerics table: worst first (new NaN or Inf, then the largest relative difference), cut to the rows asked for,
// and shown by the text, Markdown and HTML reports (the HTML one in full), kept by the JSON report; absent from every
// format when the report has no numerics.
#include "report/numerics_table.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "report/html.h"
#include "report/json.h"
#include "report/markdown.h"
#include "report/text.h"
#include "tests/checks/engine/numerics_test_util.h"

namespace graphcheck {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using testing_util::Sample;

std::vector<NumericsSample> Samples() {
  NumericsSample nonfinite = Sample("fc.bias", TensorRole::kGradient, 0);  // new non-finite values: first
  nonfinite.graphed_nonfinite = 4;
  return {Sample("fc.weight", TensorRole::kParameter, 0.01, /*spread=*/-1, /*scale=*/10),  // relative 1e-3
          Sample("output 0", TensorRole::kOutput, 0.5, -1),                                // relative 0.5
          nonfinite, Sample("steps", TensorRole::kBuffer, 0, -1, 20)};
}

TEST(NumericsTableTest, WorstFirstAndCut) {
  const CellTable table = MakeNumericsTable(Samples(), 3);
  ASSERT_EQ(table.rows.size(), 3u);
  EXPECT_EQ(table.omitted, 1u);
  EXPECT_EQ(table.rows[0][0], "fc.bias");
  EXPECT_EQ(table.rows[1][0], "output 0");
  EXPECT_EQ(table.rows[2][0], "fc.weight");
  EXPECT_THAT(table.rows[1],
              ElementsAre("output 0", "output", "float32", "0.5", "0.5", "[7] 1, 1.5", "not measured", "0, 0"));
  EXPECT_EQ(table.rows[0][5], "equal");
  EXPECT_EQ(table.rows[0][7], "0, 4");
}

TEST(NumericsTableTest, EveryFormatShowsIt) {
  Report report;
  report.mode = "check";
  report.numerics = Samples();
  const std::string text = RenderText(report, TextOptions{});
  EXPECT_THAT(text, HasSubstr("numerics, eager against graphed (worst first)"));
  EXPECT_LT(text.find("fc.bias"), text.find("output 0"));
  EXPECT_THAT(RenderMarkdown(report), HasSubstr("| output 0 | output | float32 | 0.5 | 0.5 | \\[7\\] 1, 1.5 |"));
  const std::string html = RenderHtml(report);
  EXPECT_THAT(html, HasSubstr("Numerics: eager against graphed"));
  EXPECT_THAT(html, HasSubstr("<td>steps</td>"));
  absl::StatusOr<Report> back = ReportFromJson(ReportToJson(report));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->numerics, report.numerics);
}

TEST(NumericsTableTest, AbsentWithoutNumerics) {
  Report report;
  report.mode = "run";
  EXPECT_THAT(RenderText(report, TextOptions{}), Not(HasSubstr("numerics")));
  EXPECT_THAT(RenderMarkdown(report), Not(HasSubstr("Numerics")));
  EXPECT_THAT(RenderHtml(report), Not(HasSubstr("Numerics")));
  EXPECT_THAT(ReportToJson(report), Not(HasSubstr("numerics")));
}

}  // namespace
}  // namespace graphcheck
