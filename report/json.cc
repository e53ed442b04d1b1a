#include "report/json.h"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/exit_code.h"
#include "core/fingerprint.h"
#include "core/json_fields.h"

namespace graphcheck {

// The plot data and Python frames convert field by field; a missing field reads as its default, so older reports
// and hand-written ones load. (ADL finds these in the structs' namespace, hence outside the anonymous one.)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(SourceFrame, file, line, function, user)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(TimelineKernel, name, stream, start_us, duration_us)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(TimelineLaunch, start_us, duration_us)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(StepTimeline, label, duration_us, extent_us, kernels, launches,
                                                dropped_kernels, dropped_launches)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(RunStepTime, phase, start_us, duration_us)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(HistogramBucket, lower_us, upper_us, count)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(CoverageShare, origin, kernels, gpu_us)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(StepCoverage, label, eager_kernels, eager_gpu_us, graphed)

namespace {

using nlohmann::json;

json TimelineToJson(const Timeline& t) {
  json out{{"process", t.process},
           {"run", t.run},
           {"dropped_run_steps", t.dropped_run_steps},
           {"kernel_durations", t.kernel_durations}};
  if (t.eager_step) out["eager_step"] = *t.eager_step;
  if (t.graphed_step) out["graphed_step"] = *t.graphed_step;
  return out;
}

Timeline TimelineFromJson(const json& j) {
  Timeline t;
  t.process = j.value("process", "");
  t.run = j.value("run", std::vector<RunStepTime>{});
  t.dropped_run_steps = j.value("dropped_run_steps", uint64_t{0});
  t.kernel_durations = j.value("kernel_durations", std::vector<HistogramBucket>{});
  if (j.contains("eager_step")) t.eager_step = j.at("eager_step").get<StepTimeline>();
  if (j.contains("graphed_step")) t.graphed_step = j.at("graphed_step").get<StepTimeline>();
  return t;
}

json LocationToJson(const Location& where) {
  json out = json::object();
  if (!where.api.empty()) out["api"] = where.api;
  if (where.thread_id) out["thread_id"] = *where.thread_id;
  if (where.stream_id) out["stream_id"] = *where.stream_id;
  if (where.pid) out["pid"] = *where.pid;
  if (!where.ranks.empty()) out["ranks"] = where.ranks;
  if (!where.nvtx_path.empty()) out["nvtx_path"] = where.nvtx_path;
  if (!where.backtrace.empty()) out["backtrace"] = where.backtrace;
  if (!where.python.empty()) out["python"] = where.python;
  if (!where.torch_op.empty()) out["torch_op"] = where.torch_op;
  if (!where.file.empty()) out["file"] = where.file;
  if (where.line > 0) out["line"] = where.line;
  if (where.column > 0) out["column"] = where.column;
  if (!where.key.empty()) out["key"] = where.key;
  return out;
}

json FindingToJson(const Finding& f) {
  json out{{"check_id", f.check_id},
           {"severity", std::string(SeverityName(f.severity))},
           {"title", f.title},
           {"message", f.message},
           {"evidence", f.evidence},
           {"consequences", f.consequences},
           {"where", LocationToJson(f.where)},
           {"fix", f.fix},
           {"fingerprint", FindingFingerprint(f)}};
  if (f.occurrences > 1) out["occurrences"] = f.occurrences;
  return out;
}

json RemainderToJson(const EagerRemainder& r) {
  return json{{"kernel", r.kernel},     {"where", LocationToJson(r.where)},
              {"launches", r.launches}, {"steps", r.steps},
              {"gpu_us", r.gpu_us},     {"reason", r.reason},
              {"detail", r.detail},     {"reason_where", LocationToJson(r.reason_where)}};
}

json CoverageToJson(const Coverage& c) {
  json remainders = json::array();
  for (const EagerRemainder& r : c.remainders) remainders.push_back(RemainderToJson(r));
  return json{{"process", c.process},
              {"scope", c.scope},
              {"steps_counted", c.steps_counted},
              {"steps_without_records", c.steps_without_records},
              {"total", c.total},
              {"steps", c.steps},
              {"dropped_steps", c.dropped_steps},
              {"remainders", std::move(remainders)},
              {"more_remainders", c.more_remainders}};
}

// Reading: nlohmann's typed accessors throw on a type mismatch; the reader catches at this border and turns it into
// a Status, so a bad file is an error message, never a crash.
Location LocationFromJson(const json& j) {
  Location where;
  where.api = j.value("api", "");
  if (j.contains("thread_id")) where.thread_id = j.at("thread_id").get<uint64_t>();
  if (j.contains("stream_id")) where.stream_id = j.at("stream_id").get<uint64_t>();
  if (j.contains("pid")) where.pid = j.at("pid").get<uint32_t>();
  where.ranks = j.value("ranks", std::vector<int32_t>{});
  where.nvtx_path = j.value("nvtx_path", "");
  where.backtrace = j.value("backtrace", std::vector<std::string>{});
  where.python = j.value("python", std::vector<SourceFrame>{});
  where.torch_op = j.value("torch_op", "");
  where.file = j.value("file", "");
  where.line = j.value("line", 0);
  where.column = j.value("column", 0);
  where.key = j.value("key", "");
  return where;
}

EagerRemainder RemainderFromJson(const json& j) {
  EagerRemainder r;
  r.kernel = j.value("kernel", "");
  if (j.contains("where")) r.where = LocationFromJson(j.at("where"));
  r.launches = j.value("launches", uint64_t{0});
  r.steps = j.value("steps", uint64_t{0});
  r.gpu_us = j.value("gpu_us", 0.0);
  r.reason = j.value("reason", "");
  r.detail = j.value("detail", "");
  if (j.contains("reason_where")) r.reason_where = LocationFromJson(j.at("reason_where"));
  return r;
}

Coverage CoverageFromJson(const json& j) {
  Coverage c;
  c.process = j.value("process", "");
  c.scope = j.value("scope", "");
  c.steps_counted = j.value("steps_counted", uint64_t{0});
  c.steps_without_records = j.value("steps_without_records", uint64_t{0});
  c.total = j.value("total", StepCoverage{});
  c.steps = j.value("steps", std::vector<StepCoverage>{});
  c.dropped_steps = j.value("dropped_steps", uint64_t{0});
  for (const json& r : j.value("remainders", json::array())) c.remainders.push_back(RemainderFromJson(r));
  c.more_remainders = j.value("more_remainders", uint64_t{0});
  return c;
}

absl::StatusOr<Finding> FindingFromJson(const json& j) {
  Finding f;
  f.check_id = j.at("check_id").get<std::string>();
  absl::StatusOr<Severity> severity = ParseSeverity(j.at("severity").get<std::string>());
  if (!severity.ok()) return severity.status();
  f.severity = *severity;
  f.title = j.value("title", "");
  f.message = j.at("message").get<std::string>();
  f.evidence = j.value("evidence", std::vector<std::string>{});
  f.consequences = j.value("consequences", std::vector<std::string>{});
  if (j.contains("where")) f.where = LocationFromJson(j.at("where"));
  f.fix = j.value("fix", "");
  f.occurrences = std::max<uint64_t>(1, j.value("occurrences", uint64_t{1}));
  return f;
}

absl::StatusOr<Report> ReportFromParsed(const json& j) {
  if (!j.is_object()) return absl::InvalidArgumentError("not a graphcheck report (top level is not an object)");
  const std::string schema = j.value("schema", "");
  if (schema != kReportSchema) {
    return absl::InvalidArgumentError(
        absl::StrCat("not a graphcheck report of schema ", kReportSchema, " (schema is '", schema, "')"));
  }
  Report report;
  report.tool_version = j.at("tool_version").get<std::string>();
  report.mode = j.at("mode").get<std::string>();
  report.command = j.value("command", std::vector<std::string>{});
  report.subject = j.value("subject", "");
  const json& machine = j.at("machine");
  report.machine.hostname = machine.value("hostname", "");
  if (machine.contains("gpu") && !machine.at("gpu").is_null()) {
    absl::StatusOr<GpuInfo> gpu = GpuFromJson(machine.at("gpu"));
    if (!gpu.ok()) return gpu.status();
    report.machine.gpu = *gpu;
  }
  for (const json& s : j.value("steps", json::array())) {
    absl::StatusOr<Step> step = StepFromJson(s);
    if (!step.ok()) return step.status();
    report.steps.push_back(*std::move(step));
  }
  report.checks_run = j.at("checks_run").get<std::vector<std::string>>();
  for (const json& f : j.at("findings")) {
    absl::StatusOr<Finding> finding = FindingFromJson(f);
    if (!finding.ok()) return finding.status();
    report.findings.push_back(*std::move(finding));
  }
  for (const json& m : j.value("metrics", json::array())) report.metrics.push_back(MetricFromJson(m));
  if (j.contains("timeline") && !j.at("timeline").is_null()) report.timeline = TimelineFromJson(j.at("timeline"));
  if (j.contains("coverage") && !j.at("coverage").is_null()) report.coverage = CoverageFromJson(j.at("coverage"));
  for (const json& s : j.value("numerics", json::array())) {
    absl::StatusOr<NumericsSample> sample = SampleFromJson(s);
    if (!sample.ok()) return sample.status();
    report.numerics.push_back(*std::move(sample));
  }
  for (const json& r : j.value("ranks", json::array())) {
    RankResult rank{r.at("rank").get<int32_t>(),      r.value("pid", uint32_t{0}),    r.value("host", ""),
                    r.value("captures", uint64_t{0}), r.value("graphs", uint64_t{0}), {}};
    for (const json& m : r.value("metrics", json::array())) rank.metrics.push_back(MetricFromJson(m));
    report.ranks.push_back(std::move(rank));
  }
  if (j.contains("incomplete") && !j.at("incomplete").is_null()) {
    const json& incomplete = j.at("incomplete");
    // graphcheck's own exit codes only: `graphcheck report` exits with it again, and a stored 77, 124 or 3.7 must
    // not become graphcheck's answer.
    const json& code = incomplete.at("exit_code");
    if (!code.is_number_integer() || code.get<int64_t>() < kExitFindings ||
        code.get<int64_t>() > kExitEnvironmentMissing) {
      return absl::InvalidArgumentError(absl::StrCat("incomplete.exit_code ", code.dump(),
                                                     " is not one of graphcheck's failing exit codes (1, 2, 3)"));
    }
    report.incomplete = Incomplete{code.get<int>(), incomplete.value("reason", "")};
  }
  return report;
}

}  // namespace

std::string ReportToJson(const Report& report) {
  json machine{{"hostname", report.machine.hostname}};
  machine["gpu"] = report.machine.gpu ? GpuToJson(*report.machine.gpu) : json(nullptr);
  json steps = json::array();
  for (const Step& s : report.steps) steps.push_back(StepToJson(s));
  json findings = json::array();
  for (const Finding& f : report.findings) findings.push_back(FindingToJson(f));
  json metrics = json::array();
  for (const Metric& m : report.metrics) metrics.push_back(MetricToJson(m));
  json out{{"schema", kReportSchema},
           {"tool_version", report.tool_version},
           {"mode", report.mode},
           {"command", report.command},
           {"subject", report.subject},
           {"machine", machine},
           {"steps", steps},
           {"checks_run", report.checks_run},
           {"findings", findings},
           {"metrics", metrics}};
  if (report.timeline) out["timeline"] = TimelineToJson(*report.timeline);
  if (report.coverage) out["coverage"] = CoverageToJson(*report.coverage);
  if (report.incomplete) {
    out["incomplete"] = {{"exit_code", report.incomplete->exit_code}, {"reason", report.incomplete->reason}};
  }
  if (!report.ranks.empty()) {
    json ranks = json::array();
    for (const RankResult& rank : report.ranks) {
      json metrics = json::array();
      for (const Metric& m : rank.metrics) metrics.push_back(MetricToJson(m));
      ranks.push_back({{"rank", rank.rank},
                       {"pid", rank.pid},
                       {"host", rank.host},
                       {"captures", rank.captures},
                       {"graphs", rank.graphs},
                       {"metrics", std::move(metrics)}});
    }
    out["ranks"] = std::move(ranks);
  }
  if (!report.numerics.empty()) {
    json numerics = json::array();
    for (const NumericsSample& s : report.numerics) numerics.push_back(SampleToJson(s));
    out["numerics"] = std::move(numerics);
  }
  // Strings from the program (kernel names, NVTX ranges) may hold invalid UTF-8: replace rather than throw. Every
  // character past ASCII as \uXXXX: the data reads back the same, and a terminal showing the file gets no C1 control,
  // line separator or bidi override.
  return out.dump(2, ' ', /*ensure_ascii=*/true, json::error_handler_t::replace) + "\n";
}

std::string ReportDiffToJson(const ReportDiff& diff) {
  auto findings = [](const std::vector<Finding>& list) {
    json out = json::array();
    for (const Finding& f : list) out.push_back(FindingToJson(f));
    return out;
  };
  json moved = json::array();
  for (const MetricChange& m : diff.moved) {
    json change{{"name", m.name},
                {"unit", m.unit},
                {"old", m.old_value},
                {"new", m.new_value},
                {"change_ratio", m.change_ratio},
                {"regression", m.regression}};
    if (m.limit) change["limit_ratio"] = *m.limit;
    moved.push_back(std::move(change));
  }
  json out{
      {"schema", kDiffSchema}, {"appeared", findings(diff.appeared)}, {"gone", findings(diff.gone)}, {"moved", moved}};
  return out.dump(2, ' ', /*ensure_ascii=*/true, json::error_handler_t::replace) + "\n";
}

absl::StatusOr<Report> ReportFromJson(absl::string_view text) {
  return ParseJsonText<Report>(text, "graphcheck report", ReportFromParsed);
}

}  // namespace graphcheck
