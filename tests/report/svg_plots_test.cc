// Golden tests of the HTML report's plot axes: the step plot's log axis puts every decade where its value is (no
// decade squeezed against the shortest step), and no bar passes the top tick of any axis.
#include "report/svg_plots.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <pugixml.hpp>

namespace graphcheck {
namespace {

struct Drawing {
  std::map<std::string, double> tick_lines;  // tick label -> y (log axis) or x (linear axis) of its grid line
  std::vector<pugi::xml_node> bars;
};

// The grid lines of the axis ticks, keyed by their labels, and the bars; `vertical`: ticks along y (the log plot).
Drawing Read(const pugi::xml_node& parent, bool vertical) {
  Drawing drawing;
  std::vector<pugi::xml_node> lines;
  for (pugi::xpath_node line : parent.select_nodes("//line")) lines.push_back(line.node());
  for (pugi::xpath_node tick : parent.select_nodes("//text[@class='tick']")) {
    const pugi::xml_node label = tick.node();
    // Each tick label sits beside its grid line: 4 below a horizontal one's y, 14 below a vertical one's end.
    for (const pugi::xml_node& line : lines) {
      if (vertical && std::abs(line.attribute("y1").as_double() + 4 - label.attribute("y").as_double()) < 0.01 &&
          line.attribute("y1").as_double() == line.attribute("y2").as_double()) {
        drawing.tick_lines[label.text().get()] = line.attribute("y1").as_double();
      }
      if (!vertical && std::abs(line.attribute("x1").as_double() - label.attribute("x").as_double()) < 0.01 &&
          line.attribute("x1").as_double() == line.attribute("x2").as_double()) {
        drawing.tick_lines[label.text().get()] = line.attribute("x1").as_double();
      }
    }
  }
  for (pugi::xpath_node rect : parent.select_nodes("//rect")) {
    const std::string cls = rect.node().attribute("class").value();
    if (cls.rfind("phase", 0) == 0 || cls.rfind("bar", 0) == 0) drawing.bars.push_back(rect.node());
  }
  return drawing;
}

TEST(StepPlotTest, LogAxisTicksAreWhereTheirValuesAre) {
  // A 620 us graphed step, a 25.3 ms eager step and a 66.5 ms first step, as in a GPT-2 check report.
  Timeline timeline;
  timeline.run = {{"warmup", 0, 66500}, {"eager", 66500, 25300}, {"capture", 91800, 3000}, {"graphed", 94800, 620}};
  pugi::xml_document doc;
  PlotRunSteps(timeline, doc.append_child("body"));
  const Drawing drawing = Read(doc, /*vertical=*/true);
  // Golden: decades 100 us .. 100 ms over the 190 px from y=200 to y=10, 63.33 px each.
  const std::map<std::string, double> expected = {
      {"100 us", 200.0}, {"1 ms", 136.67}, {"10 ms", 73.33}, {"100 ms", 10.0}};
  ASSERT_EQ(drawing.tick_lines.size(), expected.size());
  for (const auto& [label, y] : expected) EXPECT_NEAR(drawing.tick_lines.at(label), y, 0.01) << label;
  ASSERT_EQ(drawing.bars.size(), 4u + 4u);  // the run's steps, then the legend's swatches
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_GE(drawing.bars[i].attribute("y").as_double(), drawing.tick_lines.at("100 ms")) << "bar " << i;
  }
  // The 620 us step reads between 100 us and 1 ms, at log10(6.2) of that decade; the 25.3 ms one above 10 ms.
  EXPECT_NEAR(drawing.bars[3].attribute("y").as_double(), 200 - 63.333 * 0.79239, 0.05);
  EXPECT_LT(drawing.bars[1].attribute("y").as_double(), drawing.tick_lines.at("10 ms"));
}

TEST(StepPlotTest, LinearAxisEndsOnATickAtOrAboveTheLongestBar) {
  Report report;
  report.metrics = {{"launch.iteration_us", 7007.7, "us", "mean with a 66 ms step"},
                    {"check.eager_step_us", 25300, "us", "median"},
                    {"check.graphed_step_us", 5000, "us", "median"}};
  pugi::xml_document doc;
  PlotStepTimes(report, doc.append_child("body"));
  const Drawing drawing = Read(doc, /*vertical=*/false);
  ASSERT_EQ(drawing.bars.size(), 2u);
  // The engine's medians, as the headline's speedup uses them, not the trace's figure.
  EXPECT_THAT(drawing.bars[0].child("title").text().get(), ::testing::HasSubstr("25.3 ms"));
  // Ticks every 5 ms up to 30 ms: the 25.3 ms bar ends before the last one.
  ASSERT_TRUE(drawing.tick_lines.count("30 ms")) << "no 30 ms tick";
  for (const pugi::xml_node& bar : drawing.bars) {
    EXPECT_LE(bar.attribute("x").as_double() + bar.attribute("width").as_double(), drawing.tick_lines.at("30 ms"));
  }
}

TEST(StepPlotTest, AStepFromAReportWithoutItsExtentIsDrawnWideEnoughForItsKernels) {
  // A report written before extent_us: a GPU-bound step of 300 us whose last kernel ended at 1.4 ms.
  Timeline timeline;
  StepTimeline& step = timeline.graphed_step.emplace();
  step.label = "graphed step 6";
  step.duration_us = 300;
  step.kernels = {{"gemm", 7, 10, 200}, {"gemm", 7, 1000, 400}};
  step.launches = {{0, 5}, {5, 5}};
  pugi::xml_document doc;
  PlotStepTimelines(timeline, doc.append_child("body"));
  const Drawing drawing = Read(doc, /*vertical=*/false);
  double last_tick = 0;
  for (const auto& [label, x] : drawing.tick_lines) last_tick = std::max(last_tick, x);
  for (pugi::xpath_node rect : doc.select_nodes("//rect")) {
    const pugi::xml_node r = rect.node();
    EXPECT_LE(r.attribute("x").as_double() + r.attribute("width").as_double(), last_tick + 0.01);
  }
  std::string text;
  for (pugi::xpath_node label : doc.select_nodes("//text")) text += std::string(label.node().text().get()) + "\n";
  EXPECT_THAT(text, ::testing::HasSubstr("300 us step time, 2 kernels (its kernels ran behind its launches, until"));
}

// A report's durations are the program's: 1e308 and nan (a damaged or hostile report) draw no "inf" or "nan" and no
// number wider than the plot could use.
TEST(StepPlotTest, NumbersThatAreNotFiniteOrHugeStayOutOfTheSvg) {
  Timeline timeline;
  StepTimeline& step = timeline.eager_step.emplace();
  step.label = "eager step 3";
  step.duration_us = 1e308;
  step.kernels = {{"gemm", 7, 10, 1e308}, {"gemm", 7, 1e308, 1e308}, {"gemm", 7, std::nan(""), 400}};
  step.launches = {{0, 5}, {5, std::nan("")}};
  pugi::xml_document doc;
  PlotStepTimelines(timeline, doc.append_child("body"));
  std::ostringstream svg;
  doc.save(svg);
  EXPECT_THAT(svg.str(), ::testing::Not(::testing::HasSubstr("inf")));
  EXPECT_THAT(svg.str(), ::testing::Not(::testing::HasSubstr("nan\"")));
  for (pugi::xpath_node rect : doc.select_nodes("//rect")) {
    for (const char* attribute : {"x", "y", "width", "height"}) {
      EXPECT_LT(std::string(rect.node().attribute(attribute).value()).size(), 12u) << attribute;
    }
  }
}

}  // namespace
}  // namespace graphcheck
