#include "report/capture_plan.h"

#include <algorithm>
#include <vector>

#include <nlohmann/json.hpp>
#include <pugixml.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/plural.h"
#include "core/utf8.h"
#include "report/html.h"
#include "report/markdown.h"
#include "report/number_text.h"
#include "report/text_table.h"

namespace graphcheck {
namespace {

constexpr size_t kMaxSizeRows = 30;  // sizes listed per region outside JSON (the most called)

std::string Mib(uint64_t bytes) {
  if (bytes == 0) return "-";
  return NumberText(bytes / (1024.0 * 1024.0), 0, "MiB");
}

std::vector<std::string> SetHeader() {
  return {"set",           "buckets",  "calls covered", "padding (GPU)", "pools (private)",
          "pool (shared)", "start-up", "saving / call", "saving / step", "saving (share)"};
}

std::vector<std::vector<std::string>> SetRows(const RegionPlan& region) {
  std::vector<std::vector<std::string>> rows;
  for (const BucketSet& set : region.sets) {
    rows.push_back({set.name, absl::StrJoin(set.buckets, ", "), NumberText(100 * set.calls_covered, 1, "%"),
                    NumberText(100 * set.padding_share, 1, "%"), Mib(set.private_pools_bytes),
                    Mib(set.shared_pool_bytes), NumberText(set.capture_us / 1e3, 1, "ms"),
                    NumberText(set.saving_per_call_us, 1, "us"), NumberText(set.saving_per_step_us, 1, "us"),
                    NumberText(100 * set.saving_share, 1, "%")});
  }
  return rows;
}

std::vector<std::string> SizeHeader() { return {"size", "calls", "eager", "GPU busy", "nodes", "pool"}; }

// The most called sizes, in size order.
std::vector<std::vector<std::string>> SizeRows(const RegionPlan& region, size_t* omitted) {
  std::vector<const PlanSize*> shown;
  for (const PlanSize& s : region.sizes) shown.push_back(&s);
  if (shown.size() > kMaxSizeRows) {
    std::stable_sort(shown.begin(), shown.end(),
                     [](const PlanSize* a, const PlanSize* b) { return a->calls > b->calls; });
    shown.resize(kMaxSizeRows);
    std::sort(shown.begin(), shown.end(), [](const PlanSize* a, const PlanSize* b) { return a->size < b->size; });
  }
  *omitted = region.sizes.size() - shown.size();
  std::vector<std::vector<std::string>> rows;
  for (const PlanSize* s : shown) {
    rows.push_back({absl::StrCat(s->size), absl::StrCat(s->calls), NumberText(s->eager_us, 1, "us"),
                    absl::StrCat(NumberText(s->gpu_busy_us, 1, "us"), s->measured ? "" : " (nearest)"),
                    NumberText(s->nodes, 0), Mib(s->pool_bytes)});
  }
  return rows;
}

// "3 less called sizes": the sizes a table leaves out.
std::string LessCalled(size_t omitted) { return Plural(omitted, "less called size", "less called sizes"); }

std::string RegionSummary(const RegionPlan& region) {
  std::string out =
      absl::StrCat(Plural(region.calls, "call", "calls"), ", ", Plural(region.sizes.size(), "size", "sizes"));
  if (!region.dimension.empty()) absl::StrAppend(&out, " of ", region.dimension);
  if (!region.padded_to_max.empty()) {
    absl::StrAppend(&out, "; padded to their largest: ", absl::StrJoin(region.padded_to_max, ", "));
  }
  return out;
}

std::string RenderText(const CapturePlan& plan) {
  std::string out = absl::StrCat("graphcheck plan: ", LineText(plan.subject), "\n");
  for (const RegionPlan& region : plan.regions) {
    absl::StrAppend(&out, "\n", LineText(region.region), "\n  ", LineText(RegionSummary(region)), "\n  ",
                    LineText(region.verdict), "\n\n", AlignedTable(SetHeader(), SetRows(region)), "\n");
    size_t omitted = 0;
    absl::StrAppend(&out, AlignedTable(SizeHeader(), SizeRows(region, &omitted)));
    if (omitted > 0) absl::StrAppend(&out, "  ... and ", LessCalled(omitted), " (JSON has them all)\n");
  }
  if (!plan.notes.empty()) absl::StrAppend(&out, "\nnotes:\n");
  for (const std::string& note : plan.notes) absl::StrAppend(&out, "  ", LineText(note), "\n");
  absl::StrAppend(&out, "\nmodel:\n");
  for (const std::string& line : plan.model) absl::StrAppend(&out, "  ", line, "\n");
  return out;
}

std::vector<std::string> ValidStrings(const std::vector<std::string>& lines) {
  std::vector<std::string> out;
  for (const std::string& line : lines) out.push_back(ToValidUtf8(line));
  return out;
}

std::string RenderJson(const CapturePlan& plan) {
  nlohmann::json regions = nlohmann::json::array();
  for (const RegionPlan& region : plan.regions) {
    nlohmann::json sizes = nlohmann::json::array();
    for (const PlanSize& s : region.sizes) {
      sizes.push_back({{"size", s.size},
                       {"calls", s.calls},
                       {"eager_us", s.eager_us},
                       {"gpu_busy_us", s.gpu_busy_us},
                       {"nodes", s.nodes},
                       {"measured", s.measured},
                       {"pool_bytes", s.pool_bytes},
                       {"outliving_bytes", s.outliving_bytes}});
    }
    nlohmann::json sets = nlohmann::json::array();
    for (const BucketSet& set : region.sets) {
      sets.push_back({{"name", set.name},
                      {"buckets", set.buckets},
                      {"calls_covered", set.calls_covered},
                      {"padding_gpu_us", set.padding_gpu_us},
                      {"padding_share", set.padding_share},
                      {"private_pools_bytes", set.private_pools_bytes},
                      {"shared_pool_bytes", set.shared_pool_bytes},
                      {"capture_us", set.capture_us},
                      {"saving_per_call_us", set.saving_per_call_us},
                      {"saving_per_step_us", set.saving_per_step_us},
                      {"saving_share", set.saving_share},
                      {"net_saving_us", set.net_saving_us}});
    }
    regions.push_back({{"region", ToValidUtf8(region.region)},
                       {"calls", region.calls},
                       {"calls_per_step", region.calls_per_step},
                       {"dimension", ToValidUtf8(region.dimension)},
                       {"padded_to_max", ValidStrings(region.padded_to_max)},
                       {"pays_off", region.pays_off},
                       {"verdict", ToValidUtf8(region.verdict)},
                       {"sizes", std::move(sizes)},
                       {"sets", std::move(sets)}});
  }
  nlohmann::json doc = {{"subject", ToValidUtf8(plan.subject)},
                        {"regions", std::move(regions)},
                        {"notes", ValidStrings(plan.notes)},
                        {"model", plan.model}};
  return doc.dump(2) + "\n";
}

std::string RenderMarkdown(const CapturePlan& plan) {
  std::string out = absl::StrCat("## graphcheck plan: ", MarkdownText(plan.subject), "\n");
  for (const RegionPlan& region : plan.regions) {
    absl::StrAppend(&out, "\n### ", MarkdownText(region.region), "\n\n", MarkdownText(RegionSummary(region)), "\n\n**",
                    MarkdownText(region.verdict), "**\n\n", MarkdownTable(SetHeader(), SetRows(region)));
    size_t omitted = 0;
    const std::vector<std::vector<std::string>> rows = SizeRows(region, &omitted);
    absl::StrAppend(&out, "\n<details><summary>Sizes seen</summary>\n\n", MarkdownTable(SizeHeader(), rows));
    if (omitted > 0) absl::StrAppend(&out, "\n... and ", LessCalled(omitted), ".\n");
    absl::StrAppend(&out, "\n</details>\n");
  }
  if (!plan.notes.empty()) absl::StrAppend(&out, "\n");
  for (const std::string& note : plan.notes) absl::StrAppend(&out, "- ", MarkdownText(note), "\n");
  absl::StrAppend(&out, "\n<details><summary>Model</summary>\n\n");
  for (const std::string& line : plan.model) absl::StrAppend(&out, "- ", MarkdownText(line), "\n");
  absl::StrAppend(&out, "\n</details>\n");
  return out;
}

pugi::xml_node AddText(pugi::xml_node parent, const char* tag, const std::string& text) {
  pugi::xml_node node = parent.append_child(tag);
  if (!text.empty()) node.text() = XmlSafeText(text).c_str();
  return node;
}

void AddTable(pugi::xml_node parent, const std::vector<std::string>& header,
              const std::vector<std::vector<std::string>>& rows) {
  pugi::xml_node table = parent.append_child("table");
  pugi::xml_node head = table.append_child("tr");
  for (const std::string& cell : header) AddText(head, "th", cell);
  for (const std::vector<std::string>& row : rows) {
    pugi::xml_node tr = table.append_child("tr");
    for (const std::string& cell : row) AddText(tr, "td", cell);
  }
}

std::string RenderHtml(const CapturePlan& plan) {
  pugi::xml_document doc;
  pugi::xml_node body = StartHtml(&doc, "graphcheck plan",
                                  "body{font:14px/1.45 system-ui,sans-serif;max-width:1100px;margin:0 auto;"
                                  "padding:16px 24px}table{border-collapse:collapse;margin:8px 0}th,td{text-align:"
                                  "left;padding:3px 8px;border-bottom:1px solid #e6e9ef}.verdict{font-weight:600}");
  AddText(body, "h1", absl::StrCat("graphcheck plan: ", plan.subject));
  for (const RegionPlan& region : plan.regions) {
    pugi::xml_node section = body.append_child("section");
    AddText(section, "h2", region.region);
    AddText(section, "p", RegionSummary(region));
    AddText(section, "p", region.verdict).append_attribute("class") = "verdict";
    AddTable(section, SetHeader(), SetRows(region));
    size_t omitted = 0;
    pugi::xml_node details = section.append_child("details");
    AddText(details, "summary", "Sizes seen");
    AddTable(details, SizeHeader(), SizeRows(region, &omitted));
    if (omitted > 0) AddText(details, "p", absl::StrCat("... and ", LessCalled(omitted)));
  }
  pugi::xml_node notes = body.append_child("ul");
  for (const std::string& note : plan.notes) AddText(notes, "li", note);
  pugi::xml_node model = body.append_child("details");
  AddText(model, "summary", "Model");
  pugi::xml_node lines = model.append_child("ul");
  for (const std::string& line : plan.model) AddText(lines, "li", line);
  return HtmlText(doc);
}

}  // namespace

std::string RenderCapturePlan(const CapturePlan& plan, ReportFormat format) {
  switch (format) {
    case ReportFormat::kJson:
      return RenderJson(plan);
    case ReportFormat::kMarkdown:
      return RenderMarkdown(plan);
    case ReportFormat::kHtml:
      return RenderHtml(plan);
    case ReportFormat::kText:
    case ReportFormat::kJunit:
    case ReportFormat::kSarif:
      break;
  }
  return RenderText(plan);
}

}  // namespace graphcheck
