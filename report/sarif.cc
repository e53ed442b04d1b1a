#include "report/sarif.h"

#include <algorithm>
#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>

#include <nlohmann/json.hpp>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/fingerprint.h"
#include "report/limits.h"
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

constexpr char kSourceRootId[] = "%SRCROOT%";

// Percent-encodes the bytes of a path outside RFC 3986's unreserved set and '/' (':' too, so that a relative path's
// first segment never reads as a scheme).
std::string EncodePath(absl::string_view path) {
  std::string out;
  for (unsigned char c : path) {
    if (absl::ascii_isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '/') {
      out.push_back(static_cast<char>(c));
    } else {
      absl::StrAppendFormat(&out, "%%%02X", c);
    }
  }
  return out;
}

// Where the results' files are: paths under the source root become URIs relative to %SRCROOT% (code scanning maps
// them onto the repository's files); absolute paths elsewhere stay absolute file:// URIs.
class Artifacts {
 public:
  explicit Artifacts(const SarifPaths& paths) : paths_(paths) {}

  json Location(const std::string& path) const {
    const std::filesystem::path given(path);
    std::filesystem::path absolute = given;
    if (given.is_relative() && !paths_.working_dir.empty()) absolute = paths_.working_dir / given;
    if (absolute.is_relative()) {
      return {{"uri", EncodePath(given.lexically_normal().string())}, {"uriBaseId", kSourceRootId}};
    }
    absolute = absolute.lexically_normal();
    if (!paths_.source_root.empty()) {
      const std::filesystem::path relative = absolute.lexically_relative(paths_.source_root);
      if (!relative.empty() && *relative.begin() != "..") {
        return {{"uri", EncodePath(relative.string())}, {"uriBaseId", kSourceRootId}};
      }
    }
    return {{"uri", absl::StrCat("file://", EncodePath(absolute.string()))}};
  }

  // The run's originalUriBaseIds: where %SRCROOT% is, when known.
  std::optional<json> BaseIds() const {
    if (paths_.source_root.empty()) return std::nullopt;
    std::string root = EncodePath(std::filesystem::path(paths_.source_root).lexically_normal().string());
    if (root.back() != '/') root.push_back('/');  // a base URI ends with a slash
    return json{{kSourceRootId, {{"uri", absl::StrCat("file://", root)}}}};
  }

 private:
  const SarifPaths& paths_;
};

// Code scanning's ingestion wants a region with a start line on every result: a finding about a file as a whole
// (a trace, a program) points at its first line.
json PhysicalLocation(const Artifacts& artifacts, const std::string& file, int line, int column) {
  json location{{"artifactLocation", artifacts.Location(file)}, {"region", {{"startLine", line > 0 ? line : 1}}}};
  if (line > 0 && column > 0) location["region"]["startColumn"] = column;
  return location;
}

// Locations that name no file: "<command line>" (a flag linted from the command line), "<stdin>".
bool NamesAFile(const std::string& file) { return !file.empty() && file.front() != '<'; }

// Every result has a location (code scanning refuses a file with a result that has none): the finding's file or the
// user's Python line, else the file the run was about (the trace, the program, the model, the report), else the
// source root itself.
json Locations(const Artifacts& artifacts, const Location& where, const std::string& subject) {
  json location = json::object();
  if (NamesAFile(where.file)) {
    location["physicalLocation"] = PhysicalLocation(artifacts, where.file, where.line, where.column);
  } else if (const SourceFrame* frame = FirstUserFrame(where); frame != nullptr && !frame->file.empty()) {
    location["physicalLocation"] = PhysicalLocation(artifacts, frame->file, frame->line, 0);
  } else {
    location["physicalLocation"] = PhysicalLocation(artifacts, subject.empty() ? "." : subject, 0, 0);
  }
  json logical = json::array();
  if (!where.torch_op.empty()) logical.push_back({{"fullyQualifiedName", where.torch_op}, {"kind", "function"}});
  if (!where.api.empty()) logical.push_back({{"fullyQualifiedName", where.api}, {"kind", "function"}});
  if (!where.key.empty()) logical.push_back({{"fullyQualifiedName", where.key}, {"kind", "member"}});
  if (!logical.empty()) location["logicalLocations"] = logical;
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

json Result(const Finding& f, size_t rule_index, const Artifacts& artifacts, const std::string& subject) {
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
              {"locations", Locations(artifacts, f.where, subject)},
              {"partialFingerprints", {{kFingerprintKey, FindingFingerprint(f)}}}};
  if (f.occurrences > 1) result["occurrenceCount"] = f.occurrences;
  if (!where.empty()) properties["where"] = where;
  if (!properties.empty()) result["properties"] = properties;
  return result;
}

// The results, most severe first as the report orders them, up to kMaxSarifResults and kMaxSarifBytes of compact
// JSON; the number left out goes to *omitted.
json Results(const Report& report, const std::map<std::string, size_t>& rule_index, const Artifacts& artifacts,
             const std::string& subject, size_t* omitted) {
  json results = json::array();
  size_t bytes = 0;
  for (const Finding& f : report.findings) {
    if (results.size() == kMaxSarifResults) break;
    json result = Result(f, rule_index.at(f.check_id), artifacts, subject);
    bytes += result.dump(-1, ' ', /*ensure_ascii=*/true, json::error_handler_t::replace).size();
    if (bytes > kMaxSarifBytes) break;
    results.push_back(std::move(result));
  }
  *omitted = report.findings.size() - results.size();
  return results;
}

// What the tool says about the run itself, in the invocation: it did not complete, or findings were left out.
void SetNotifications(const Report& report, size_t omitted, json* invocation) {
  json notifications = json::array();
  if (report.incomplete) {
    notifications.push_back(
        {{"level", "error"},
         {"message", {{"text", absl::StrCat("The run did not complete: ", report.incomplete->reason)}}}});
  }
  if (omitted > 0) {
    notifications.push_back({{"level", "warning"}, {"message", {{"text", MoreFindingsLine(omitted)}}}});
  }
  if (notifications.empty()) {
    invocation->erase("toolExecutionNotifications");
  } else {
    (*invocation)["toolExecutionNotifications"] = std::move(notifications);
  }
}

// ASCII only, as the JSON report (report/json.cc): a viewer reads the same strings, a terminal sees no raw control.
std::string Serialize(const json& log) {
  return log.dump(2, ' ', /*ensure_ascii=*/true, json::error_handler_t::replace) + "\n";
}

// The file, at most kMaxSarifBytes: indentation adds to the results' compact size, so the last tenth of the results
// goes until it fits (a few rounds at most, as indentation less than doubles the size).
std::string SerializeWithinLimit(const Report& report, size_t omitted, json* log) {
  std::string text = Serialize(*log);
  json& run = (*log)["runs"][0];
  while (text.size() > kMaxSarifBytes && !run["results"].empty()) {
    json& results = run["results"];
    const size_t drop = std::max<size_t>(1, results.size() / 10);
    results.erase(results.end() - static_cast<std::ptrdiff_t>(drop), results.end());
    omitted += drop;
    SetNotifications(report, omitted, &run["invocations"][0]);
    text = Serialize(*log);
  }
  return text;
}

}  // namespace

std::string CheckDocUri(const std::string& check_id) {
  return sizeof(kDocsUrl) > 1 ? absl::StrCat(kDocsUrl, check_id, ".md") : std::string();
}

std::string RenderSarif(const Report& report, const CheckRegistry* checks, const SarifPaths& paths) {
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
  const Artifacts artifacts(paths);
  size_t omitted = 0;
  const std::string& subject = !report.subject.empty() ? report.subject : paths.default_artifact;
  json results = Results(report, rule_index, artifacts, subject, &omitted);

  json invocation{{"executionSuccessful", !report.incomplete}};
  if (report.incomplete) invocation["exitCode"] = report.incomplete->exit_code;
  SetNotifications(report, omitted, &invocation);
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
  if (std::optional<json> base_ids = artifacts.BaseIds()) run["originalUriBaseIds"] = *std::move(base_ids);
  if (sizeof(kDocsUrl) > 1) run["tool"]["driver"]["informationUri"] = kDocsUrl;
  json log{{"$schema", kSchemaUri}, {"version", "2.1.0"}, {"runs", json::array({run})}};
  return SerializeWithinLimit(report, omitted, &log);
}

}  // namespace graphcheck
