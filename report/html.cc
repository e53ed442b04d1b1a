#include "report/html.h"

#include <algorithm>
#include <functional>
#include <map>
#include <sstream>
#include <utility>
#include <vector>

#include <pugixml.hpp>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/plural.h"
#include "core/utf8.h"
#include "report/coverage_table.h"
#include "report/limits.h"
#include "report/number_text.h"
#include "report/numerics_table.h"
#include "report/sarif.h"
#include "report/svg_plots.h"
#include "report/verdict.h"
#include "report/where.h"

namespace graphcheck {
namespace {

// The style sheet is the program's own text. It must hold no '<', '>' or '&': pugixml escapes them in text nodes and
// an HTML <style> element is not unescaped.
constexpr char kStyle[] = R"css(
body { font: 14px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 1100px; padding: 16px 24px; color: #1d2330; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 18px; border-bottom: 1px solid #d8dce4; padding-bottom: 4px; margin-top: 28px; }
h3 { font-size: 15px; margin: 0 0 6px; }
.meta { color: #5b6475; margin: 0; }
.verdict { border-radius: 6px; padding: 12px 16px; margin: 16px 0; border: 1px solid; }
.verdict p { margin: 2px 0; }
.verdict .headline { font-size: 17px; font-weight: 600; }
.blocked { background: #fdecec; border-color: #e3a2a2; }
.captured { background: #e9f7ee; border-color: #98d1ab; }
.clear { background: #eef3fb; border-color: #a9bfe3; }
.incomplete { background: #fff4e0; border-color: #e0b060; }
table { border-collapse: collapse; width: 100%; margin: 8px 0; }
th, td { text-align: left; padding: 3px 8px; border-bottom: 1px solid #e6e9ef; vertical-align: top; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.finding { border-left: 4px solid #9aa3b5; padding: 6px 12px; margin: 10px 0; background: #fafbfc; }
.finding.error { border-color: #d64545; }
.finding.warning { border-color: #e0a100; }
.finding.note { border-color: #3f88c5; }
.sev { font-weight: 700; text-transform: uppercase; font-size: 12px; }
.error .sev { color: #b42323; } .warning .sev { color: #9a6b00; } .note .sev { color: #2a6aa0; }
.fix { background: #eef7ee; padding: 4px 8px; border-radius: 4px; }
code, .mono, pre { font-family: ui-monospace, monospace; font-size: 12.5px; }
pre { white-space: pre-wrap; word-break: break-all; margin: 4px 0; }
dl { display: grid; grid-template-columns: max-content auto; gap: 2px 12px; margin: 6px 0; }
dt { color: #5b6475; } dd { margin: 0; }
.status-ok { color: #1f7a3d; } .status-failed { color: #b42323; font-weight: 600; } .status-skipped { color: #5b6475; }
figure { margin: 16px 0; }
figcaption { color: #3a4256; font-weight: 600; margin-bottom: 4px; }
figure svg { width: 100%; height: auto; display: block; }
.note { color: #5b6475; font-size: 12px; margin: 2px 0; }
svg text { font: 11px system-ui, sans-serif; fill: #2c3344; }
svg text.tick { fill: #5b6475; font-size: 10px; }
svg text.heading { font-weight: 600; }
svg .axis { stroke: #c5cad5; stroke-width: 1; }
svg .launch { fill: #6c7a96; }
svg .bar { fill: #5b8def; }
svg .k0 { fill: #4e79a7; } svg .k1 { fill: #f28e2b; } svg .k2 { fill: #59a14f; } svg .k3 { fill: #e15759; }
svg .k4 { fill: #76b7b2; } svg .k5 { fill: #edc948; } svg .k6 { fill: #b07aa1; } svg .k7 { fill: #9c755f; }
svg .ph-warmup { fill: #b8bfcc; } svg .ph-eager { fill: #f28e2b; } svg .ph-capture { fill: #e15759; }
svg .ph-graphed { fill: #4e79a7; } svg .ph-forecast { fill: #76b7b2; } svg .ph-other { fill: #9c755f; }
svg .cov-eager { fill: #f28e2b; } svg .cov-user { fill: #4e79a7; } svg .cov-make_graphed_callables { fill: #59a14f; }
svg .cov-cudagraph-trees { fill: #b07aa1; } svg .cov-transformer-engine { fill: #76b7b2; }
svg .cov-megatron { fill: #edc948; } svg .cov-megatron-full-iteration { fill: #9c755f; } svg .cov-other { fill: #b8bfcc; }
)css";

// Appends <tag class=cls>text</tag>; text from the program goes through XmlSafeText here and pugixml's escaping on
// save.
pugi::xml_node Add(pugi::xml_node parent, const char* tag, const std::string& text, const char* cls = nullptr) {
  pugi::xml_node node = parent.append_child(tag);
  if (cls != nullptr) node.append_attribute("class") = cls;
  if (!text.empty()) node.text() = XmlSafeText(text).c_str();
  return node;
}

void AddRow(pugi::xml_node table, const std::vector<std::string>& cells, const char* tag = "td") {
  pugi::xml_node row = table.append_child("tr");
  for (const std::string& cell : cells) Add(row, tag, cell);
}

void AddHeader(const Report& report, pugi::xml_node body) {
  Add(body, "h1", absl::StrCat("graphcheck ", report.mode, " report"));
  std::vector<std::string> meta;
  if (!report.command.empty()) meta.push_back(absl::StrJoin(report.command, " "));
  if (!report.machine.hostname.empty()) meta.push_back(absl::StrCat("host ", report.machine.hostname));
  if (report.machine.gpu) {
    meta.push_back(absl::StrCat(report.machine.gpu->name, " (sm ", report.machine.gpu->cc_major,
                                report.machine.gpu->cc_minor, ", driver ", report.machine.gpu->driver, ")"));
  }
  meta.push_back(absl::StrCat("graphcheck ", report.tool_version));
  Add(body, "p", absl::StrJoin(meta, " | "), "meta");
}

void AddVerdict(const Report& report, pugi::xml_node body) {
  const Verdict& verdict = report.verdict;
  const char* cls = verdict.capturability == Capturability::kBlocked      ? "verdict blocked"
                    : verdict.capturability == Capturability::kIncomplete ? "verdict incomplete"
                    : verdict.capturability == Capturability::kCaptured   ? "verdict captured"
                                                                          : "verdict clear";
  pugi::xml_node section = Add(body, "section", "", cls);
  Add(section, "p", verdict.headline, "headline");
  if (!verdict.saving.empty()) Add(section, "p", verdict.saving);
  Add(section, "p", absl::StrCat(FindingCounts(report), " from ", Plural(report.checks_run.size(), "check", "checks")));
}

void AddPlots(const Report& report, pugi::xml_node body) {
  pugi::xml_node section = body.append_child("section");
  Add(section, "h2", "Plots");
  if (report.timeline) PlotStepTimelines(*report.timeline, section);
  PlotStepTimes(report, section);
  if (report.timeline) {
    PlotRunSteps(*report.timeline, section);
    PlotKernelDurations(*report.timeline, section);
  }
  if (report.coverage) PlotCoverage(*report.coverage, section);
  if (section.child("figure").empty()) Add(section, "p", "No steps were timed in this run: nothing to plot.", "note");
}

// A folded list of frames: what the user reads first is the Python line; the C++ frames are for whoever digs.
void AddFrames(pugi::xml_node parent, const std::string& summary, const std::vector<std::string>& frames) {
  if (frames.empty()) return;
  pugi::xml_node details = parent.append_child("details");
  Add(details, "summary", absl::StrCat(summary, " (", Plural(frames.size(), "frame", "frames"), ")"));
  // One line per frame: the <pre> keeps newlines, and a frame's own would forge frames.
  Add(details, "pre",
      absl::StrJoin(frames, "\n", [](std::string* out, const std::string& frame) { out->append(LineText(frame)); }));
}

void AddList(pugi::xml_node parent, const std::string& heading, const std::vector<std::string>& items) {
  if (items.empty()) return;
  Add(parent, "p", heading);
  pugi::xml_node list = parent.append_child("ul");
  for (const std::string& item : items) Add(list, "li", item);
}

void AddFinding(const Finding& f, pugi::xml_node parent) {
  const std::string severity(SeverityName(f.severity));
  pugi::xml_node article = Add(parent, "article", "", absl::StrCat("finding ", severity).c_str());
  Add(article, "span", severity, "sev");
  Add(article, "p", f.message);
  if (f.occurrences > 1) Add(article, "p", absl::StrCat(f.occurrences, " times at this call site"), "note");
  pugi::xml_node where = article.append_child("dl");
  auto field = [&](const char* name, const std::string& value, const char* cls = "mono") {
    if (value.empty()) return;
    Add(where, "dt", name);
    Add(where, "dd", value, cls);
  };
  if (const SourceFrame* frame = FirstUserFrame(f.where)) field("your code", FrameText(*frame));
  field("file", FileText(f.where));
  field("key", f.where.key);
  field("NVTX range", f.where.nvtx_path);
  field("operator", f.where.torch_op);
  field("call", f.where.api);
  std::vector<std::string> context;
  if (!f.where.ranks.empty()) context.push_back(RanksText(f.where.ranks));
  if (f.where.pid) context.push_back(absl::StrCat("pid ", *f.where.pid));
  if (f.where.thread_id) context.push_back(absl::StrCat("thread ", *f.where.thread_id));
  if (f.where.stream_id) context.push_back(absl::StrCat("stream ", *f.where.stream_id));
  field("process", absl::StrJoin(context, ", "));
  if (where.first_child().empty()) article.remove_child(where);
  std::vector<std::string> python;
  for (const SourceFrame& frame : f.where.python) python.push_back(FrameText(frame));
  AddFrames(article, "Python stack, innermost first", python);
  AddFrames(article, "C++ backtrace, innermost first", f.where.backtrace);
  AddList(article, "Evidence", f.evidence);
  AddList(article, "What it went on to break", f.consequences);
  if (!f.fix.empty()) Add(article, "p", absl::StrCat("Fix: ", f.fix), "fix");
}

void AddFindings(const Report& report, pugi::xml_node body) {
  pugi::xml_node section = body.append_child("section");
  Add(section, "h2", "Findings");
  if (report.findings.empty()) Add(section, "p", "No findings.");
  // One group per check: a check reports one finding per root cause, its consequences inside it. The first
  // kMaxFindingsShown findings (most severe first) are shown; a line counts the rest.
  std::vector<std::string> order;
  std::map<std::string, std::vector<const Finding*>> by_check;
  const size_t shown = std::min(report.findings.size(), kMaxFindingsShown);
  for (size_t i = 0; i < shown; ++i) {
    const Finding& f = report.findings[i];
    if (by_check[f.check_id].empty()) order.push_back(f.check_id);
    by_check[f.check_id].push_back(&f);
  }
  for (const std::string& id : order) {
    const std::vector<const Finding*>& findings = by_check[id];
    pugi::xml_node heading = section.append_child("h3");
    heading.text() = XmlSafeText(absl::StrCat(findings.front()->title, " (", findings.size(), ") ")).c_str();
    const std::string doc = CheckDocUri(id);
    pugi::xml_node link = Add(heading, doc.empty() ? "span" : "a", id, "mono");
    if (!doc.empty()) link.append_attribute("href") = doc.c_str();
    for (const Finding* f : findings) AddFinding(*f, section);
  }
  if (shown < report.findings.size()) Add(section, "p", MoreFindingsLine(report.findings.size() - shown), "note");
}

// A distributed job's ranks side by side: a column per rank (the first kMaxRankColumns), rows for who it is, its
// captures, and its own value of each metric where the ranks differ; the Metrics section has the medians.
void AddRanks(const Report& report, pugi::xml_node body) {
  if (report.ranks.size() < 2) return;
  constexpr size_t kMaxRankColumns = 16;
  const size_t shown = std::min(report.ranks.size(), kMaxRankColumns);
  pugi::xml_node section = body.append_child("section");
  Add(section, "h2", "Ranks side by side");
  pugi::xml_node table = section.append_child("table");
  table.append_attribute("class") = "ranks";
  std::vector<std::string> header = {""};
  for (size_t i = 0; i < shown; ++i) header.push_back(absl::StrCat("rank ", report.ranks[i].rank));
  AddRow(table, header, "th");
  auto row = [&](const std::string& label, const std::function<std::string(const RankResult&)>& cell) {
    std::vector<std::string> cells = {label};
    for (size_t i = 0; i < shown; ++i) cells.push_back(cell(report.ranks[i]));
    AddRow(table, cells);
  };
  row("host, pid", [](const RankResult& r) { return absl::StrCat(r.host, r.host.empty() ? "" : ", ", r.pid); });
  row("captures (graphs made)", [](const RankResult& r) { return absl::StrCat(r.captures, " (", r.graphs, ")"); });
  // The metrics that differ, in the order the first rank that has them lists them.
  std::vector<std::pair<std::string, std::string>> names;  // name, unit
  for (const RankResult& rank : report.ranks) {
    for (const Metric& m : rank.metrics) {
      auto known = [&](const auto& named) { return named.first == m.ScopedName(); };
      if (std::none_of(names.begin(), names.end(), known)) names.emplace_back(m.ScopedName(), m.unit);
    }
  }
  for (const auto& [name, unit] : names) {
    row(absl::StrCat(name, " (", unit, ")"), [&name = name](const RankResult& r) {
      auto m =
          std::find_if(r.metrics.begin(), r.metrics.end(), [&](const Metric& x) { return x.ScopedName() == name; });
      return m == r.metrics.end() ? std::string("-") : NumberText(m->value, 4, "", Notation::kSignificant);
    });
  }
  Add(section, "p",
      absl::StrCat(names.empty() ? "Every metric agrees across the ranks within 5%"
                                 : "Metrics that differ across the ranks by more than 5%; the others agree",
                   " (Metrics below: medians over the ranks).",
                   shown < report.ranks.size()
                       ? absl::StrCat(" ", Plural(report.ranks.size() - shown, "more rank is", "more ranks are"),
                                      " in the JSON report.")
                       : ""),
      "note");
}

// `one` and `many` name what the table leaves out: "more step", "more steps".
void AddTable(pugi::xml_node parent, const CellTable& table, absl::string_view one, absl::string_view many) {
  pugi::xml_node rows = parent.append_child("table");
  AddRow(rows, table.header, "th");
  for (const std::vector<std::string>& row : table.rows) AddRow(rows, row);
  if (table.omitted > 0) Add(parent, "p", absl::StrCat("... and ", Plural(table.omitted, one, many), "."), "note");
}

// What share of the steps ran as graph replays, by who made the graphs, and the largest eager remainders with why.
void AddCoverage(const Report& report, pugi::xml_node body) {
  if (!report.coverage) return;
  constexpr size_t kMaxCoverageRows = 200;
  pugi::xml_node section = body.append_child("section");
  Add(section, "h2", "CUDA graph coverage");
  for (const std::string& line : CoverageHeadline(*report.coverage)) Add(section, "p", line);
  if (report.coverage->steps_counted == 0) return;
  const CellTable remainders = MakeRemainderTable(*report.coverage);
  if (!remainders.rows.empty()) {
    Add(section, "h3", "Largest eager remainders and why they are not graphed");
    AddTable(section, remainders, "more call site", "more call sites");
  }
  Add(section, "h3", "Per step");
  AddTable(section, MakeCoverageStepTable(*report.coverage, kMaxCoverageRows), "more step (the JSON report lists it)",
           "more steps (the JSON report lists them)");
}

void AddSteps(const Report& report, pugi::xml_node body) {
  if (report.steps.empty()) return;
  pugi::xml_node section = body.append_child("section");
  Add(section, "h2", "Pipeline steps");
  pugi::xml_node table = section.append_child("table");
  AddRow(table, {"step", "status", "time", "message"}, "th");
  for (const Step& s : report.steps) {
    pugi::xml_node row = table.append_child("tr");
    Add(row, "td", s.name);
    const std::string status(StepStatusName(s.status));
    Add(row, "td", status, absl::StrCat("status-", status).c_str());
    Add(row, "td", NumberText(s.duration_ms, 1, "ms"), "num");
    Add(row, "td", s.message);
  }
}

// Every tensor the engine compared, worst first: the table a numerics finding points at.
void AddNumerics(const Report& report, pugi::xml_node body) {
  if (report.numerics.empty()) return;
  const CellTable table = MakeNumericsTable(report.numerics, report.numerics.size());
  pugi::xml_node section = body.append_child("section");
  Add(section, "h2", "Numerics: eager against graphed");
  Add(section, "p",
      "Each tensor as the eager and the graphed run left it, from the same state: outputs and gradients of the first "
      "step, parameters and buffers after the last. Worst first.",
      "note");
  AddTable(section, table, "more tensor", "more tensors");
}

void AddMetrics(const Report& report, pugi::xml_node body) {
  if (report.metrics.empty()) return;
  pugi::xml_node section = body.append_child("section");
  Add(section, "h2", "Metrics");
  pugi::xml_node table = section.append_child("table");
  AddRow(table, {"metric", "value", "unit", "meaning"}, "th");
  for (const Metric& m : report.metrics) {
    pugi::xml_node row = table.append_child("tr");
    Add(row, "td", m.ScopedName(), "mono");
    Add(row, "td", NumberText(m.value, 4, "", Notation::kSignificant), "num");
    Add(row, "td", m.unit);
    Add(row, "td", m.description);
  }
}

}  // namespace

pugi::xml_node StartHtml(pugi::xml_document* doc, const std::string& title, const char* style) {
  doc->append_child(pugi::node_doctype).set_value("html");
  pugi::xml_node html = doc->append_child("html");
  html.append_attribute("lang") = "en";
  pugi::xml_node head = html.append_child("head");
  head.append_child("meta").append_attribute("charset") = "utf-8";
  Add(head, "title", title);
  head.append_child("style").append_child(pugi::node_pcdata).set_value(style);
  return html.append_child("body");
}

std::string HtmlText(const pugi::xml_document& doc) {
  std::ostringstream out;
  doc.save(out, " ", pugi::format_indent | pugi::format_no_empty_element_tags, pugi::encoding_utf8);
  return out.str();
}

std::string RenderHtml(const Report& report) {
  pugi::xml_document doc;
  pugi::xml_node body = StartHtml(&doc, absl::StrCat("graphcheck ", report.mode, " report"), kStyle);
  AddHeader(report, body);
  AddVerdict(report, body);
  AddPlots(report, body);
  AddRanks(report, body);
  AddFindings(report, body);
  AddCoverage(report, body);
  AddSteps(report, body);
  AddNumerics(report, body);
  AddMetrics(report, body);
  return HtmlText(doc);
}

}  // namespace graphcheck
