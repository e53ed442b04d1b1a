#include "report/sarif.h"

#include <algorithm>
#include <map>

#include <nlohmann/json.hpp>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/fingerprint.h"
#include "report/where.h"

namespace graphcheck {
namespace {

using nlohmann::json;

constexpr char kDocsUrl[] = GRAPHCHECK_DOCS_URL;
constexpr char kSchemaUri[] =
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";

std::string Level(Severity severity) {
  return std::string(SeverityName(severity));  // SARIF's levels are spelt as graphcheck's severities
}

// A file path as a URI reference: relative paths stay relative (code scanning resolves them against the checkout),
// absolute ones become file:// URIs; bytes outside RFC 3986's unreserved set and '/' are percent-encoded.
std::string PathUri(const std::string& path) {
  std::string out = path.front() == '/' ? "file://" : "";
  for (unsigned char c : path) {
    if (absl::ascii_isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '/') {
      out.push_back(static_cast<char>(c));
    } else {
      absl::StrAppendFormat(&out, "%%%02X", c);
    }
  }
  return out;
}

json PhysicalLocation(const std::string& file, int line, int column) {
  json location{{"artifactLocation", {{"uri", PathUri(file)}}}};
  if (line > 0) {
    location["region"] = {{"startLine", line}};
    if (column > 0) location["region"]["startColumn"] = column;
  }
  return location;
}

json Locations(const Location& where) {
  json location = json::object();
  if (!where.file.empty()) {
    location["physicalLocation"] = PhysicalLocation(where.file, where.line, where.column);
  } else if (const SourceFrame* frame = FirstUserFrame(where); frame != nullptr && !frame->file.empty()) {
    location["physicalLocation"] = PhysicalLocation(frame->file, frame->line, 0);
  }
  json logical = json::array();
  if (!where.torch_op.empty()) logical.push_back({{"fullyQualifiedName", where.torch_op}, {"kind", "function"}});
  if (!where.api.empty()) logical.push_back({{"fullyQualifiedName", where.api}, {"kind", "function"}});
  if (!where.key.empty()) logical.push_back({{"fullyQualifiedName", where.key}, {"kind", "member"}});
  if (!logical.empty()) location["logicalLocations"] = logical;
  if (location.empty()) return json::array();
  return json::array({location});
}

json Rule(const std::string& id, const std::string& title, const std::string& summary, Severity level,
          const std::string& area) {
  const std::string help = summary.empty() ? title : summary;
  const std::string doc = CheckDocUri(id);
  json rule{{"id", id},
            {"shortDescription", {{"text", title.empty() ? id : title}}},
            {"fullDescription", {{"text", help.empty() ? id : help}}},
            {"help",
             {{"text", absl::StrCat(help, " Run `graphcheck explain ", id, "`",
                                    doc.empty() ? "" : absl::StrCat(" or see ", doc), ".")}}},
            {"defaultConfiguration", {{"level", Level(level)}}}};
  if (!doc.empty()) rule["helpUri"] = doc;  // SARIF wants an absolute URI or none
  if (!area.empty()) rule["properties"] = {{"tags", json::array({area})}};
  return rule;
}

json Result(const Finding& f, size_t rule_index) {
  json properties = json::object();
  if (!f.evidence.empty()) properties["evidence"] = f.evidence;
  if (!f.consequences.empty()) properties["consequences"] = f.consequences;
  if (!f.fix.empty()) properties["fix"] = f.fix;
  if (!f.where.nvtx_path.empty()) properties["nvtxPath"] = f.where.nvtx_path;
  if (!f.where.backtrace.empty()) properties["backtrace"] = f.where.backtrace;
  const std::string where = absl::StrJoin(WhereParts(f.where), ", ");
  json result{{"ruleId", f.check_id},
              {"ruleIndex", rule_index},
              {"level", Level(f.severity)},
              {"message", {{"text", f.fix.empty() ? f.message : absl::StrCat(f.message, " Fix: ", f.fix)}}},
              {"partialFingerprints", {{kFingerprintKey, FindingFingerprint(f)}}}};
  if (!where.empty()) properties["where"] = where;
  json locations = Locations(f.where);
  if (!locations.empty()) result["locations"] = locations;
  if (!properties.empty()) result["properties"] = properties;
  return result;
}

}  // namespace

std::string CheckDocUri(const std::string& check_id) {
  return sizeof(kDocsUrl) > 1 ? absl::StrCat(kDocsUrl, check_id, ".md") : std::string();
}

std::string RenderSarif(const Report& report, const CheckRegistry* checks) {
  // Rules: every check that ran, and any other a finding names; sorted by id so ruleIndex is stable.
  std::map<std::string, json> rules;
  for (const std::string& id : report.checks_run) rules[id];
  for (const Finding& f : report.findings) rules[f.check_id];
  for (auto& [id, rule] : rules) {
    if (const Check* check = checks != nullptr ? checks->Find(id) : nullptr) {
      const CheckInfo& info = check->info();
      rule = Rule(id, info.title, info.summary, info.default_severity, std::string(CheckAreaName(info.area)));
      continue;
    }
    auto finding = std::find_if(report.findings.begin(), report.findings.end(),
                                [&id = id](const Finding& f) { return f.check_id == id; });
    rule = finding == report.findings.end() ? Rule(id, "", "", Severity::kWarning, "")
                                            : Rule(id, finding->title, "", finding->severity, "");
  }
  json rule_list = json::array();
  std::map<std::string, size_t> rule_index;
  for (auto& [id, rule] : rules) {
    rule_index[id] = rule_list.size();
    rule_list.push_back(std::move(rule));
  }
  json results = json::array();
  for (const Finding& f : report.findings) results.push_back(Result(f, rule_index[f.check_id]));

  json invocation{{"executionSuccessful", true}};
  if (!report.command.empty()) {
    invocation["commandLine"] = absl::StrJoin(report.command, " ");
    invocation["arguments"] = std::vector<std::string>(report.command.begin() + 1, report.command.end());
  }
  if (!report.machine.hostname.empty()) invocation["machine"] = report.machine.hostname;
  json run{{"tool",
            {{"driver",
              {{"name", "graphcheck"},
               {"version", report.tool_version},
               {"semanticVersion", report.tool_version},
               {"rules", rule_list}}}}},
           {"invocations", json::array({invocation})},
           {"results", results},
           {"properties", {{"mode", report.mode}}}};
  if (sizeof(kDocsUrl) > 1) run["tool"]["driver"]["informationUri"] = kDocsUrl;
  json log{{"$schema", kSchemaUri}, {"version", "2.1.0"}, {"runs", json::array({run})}};
  return log.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace graphcheck
