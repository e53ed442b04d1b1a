// Test-only loader of the synthetic golden fixtures (tests/golden/<name>.trace.json, format in tests/golden/README.md)
// into a Trace, and the text form of the expected findings and metrics they are compared with.
#ifndef GRAPHCHECK_TESTS_GOLDEN_GOLDEN_TRACE_H_
#define GRAPHCHECK_TESTS_GOLDEN_GOLDEN_TRACE_H_

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "checks/analyze.h"
#include "report/coverage_table.h"
#include "trace/events.h"

namespace graphcheck::golden {

struct Fixture {
  trace::Trace trace;
  std::vector<std::string> stderr_lines;
  bool has_stderr = false;
};

inline trace::ApiKind KindNamed(const std::string& name) {
  for (int k = 0; k <= static_cast<int>(trace::ApiKind::kContextCreate); ++k) {
    if (trace::ApiKindName(static_cast<trace::ApiKind>(k)) == name) return static_cast<trace::ApiKind>(k);
  }
  throw std::runtime_error("unknown call kind '" + name + "'");
}

template <typename Enum>
Enum Named(const nlohmann::json& j, const char* key, std::initializer_list<std::pair<const char*, Enum>> names,
           Enum fallback) {
  if (!j.contains(key)) return fallback;
  const std::string value = j[key];
  for (const auto& [name, e] : names) {
    if (value == name) return e;
  }
  throw std::runtime_error(absl::StrCat("bad value '", value, "' for '", key, "'"));
}

class FixtureLoader {
 public:
  Fixture Load(const nlohmann::json& doc) {
    Fixture f;
    trace_ = &f.trace;
    const nlohmann::json process = doc.value("process", nlohmann::json::object());
    f.trace.process.pid = process.value("pid", 1000u);
    f.trace.process.rank = process.value("rank", -1);
    const nlohmann::json environment = doc.value("environment", nlohmann::json::object());
    for (auto it = environment.begin(); it != environment.end(); ++it) {
      f.trace.environment.Set(it.key(), it.value().get<std::string>());
    }
    AddCalls(doc.value("calls", nlohmann::json::array()), 0);
    for (const nlohmann::json& e : doc.value("nvtx", nlohmann::json::array())) AddNvtx(e, 0);
    for (const nlohmann::json& e : doc.value("probe", nlohmann::json::array())) AddProbe(e);
    if (doc.contains("stderr")) {
      f.has_stderr = true;
      f.stderr_lines = doc["stderr"].get<std::vector<std::string>>();
    }
    std::stable_sort(calls_.begin(), calls_.end(), [](const trace::ApiCallRecord& a, const trace::ApiCallRecord& b) {
      return a.start_ns < b.start_ns;
    });
    for (const trace::ApiCallRecord& call : calls_) f.trace.AddCall(call);
    std::stable_sort(f.trace.probe_events.begin(), f.trace.probe_events.end(),
                     [](const trace::ProbeEvent& a, const trace::ProbeEvent& b) { return a.time_ns < b.time_ns; });
    return f;
  }

 private:
  // A call, or {"repeat": N, "every": NS, "calls": [...], "nvtx": [...]} repeating a block N times.
  void AddCalls(const nlohmann::json& calls, uint64_t offset) {
    for (const nlohmann::json& c : calls) {
      if (c.contains("repeat")) {
        for (int r = 0; r < c["repeat"].get<int>(); ++r) {
          const uint64_t at = offset + r * c["every"].get<uint64_t>();
          AddCalls(c.value("calls", nlohmann::json::array()), at);
          for (const nlohmann::json& e : c.value("nvtx", nlohmann::json::array())) AddNvtx(e, at);
        }
        continue;
      }
      AddCall(c, offset);
    }
  }

  void AddCall(const nlohmann::json& c, uint64_t offset) {
    trace::ApiCallRecord call;
    call.correlation_id = ++correlation_;
    call.start_ns = offset + c.at("t").get<uint64_t>();
    call.end_ns = call.start_ns + c.value("dur", 1000u);
    call.thread_id = c.value("tid", 1u);
    call.name = trace_->Intern(c.at("api").get<std::string>());
    call.kind = KindNamed(c.at("kind"));
    call.return_code = c.value("rc", 0);
    call.stream_id = c.value("stream", 0u);
    call.legacy_stream = c.value("legacy", false);
    call.capture_status = Named<trace::CaptureStatus>(
        c, "capture", {{"active", trace::CaptureStatus::kActive}, {"invalidated", trace::CaptureStatus::kInvalidated}},
        trace::CaptureStatus::kNone);
    call.capture_mode = Named<trace::CaptureMode>(c, "mode",
                                                  {{"global", trace::CaptureMode::kGlobal},
                                                   {"thread-local", trace::CaptureMode::kThreadLocal},
                                                   {"relaxed", trace::CaptureMode::kRelaxed}},
                                                  trace::CaptureMode::kUnknown);
    call.capture_id = c.value("capture_id", 0u);
    call.bytes = c.value("bytes", 0u);
    call.direction = Named<trace::MemcpyDirection>(c, "dir",
                                                   {{"h2d", trace::MemcpyDirection::kHostToDevice},
                                                    {"d2h", trace::MemcpyDirection::kDeviceToHost},
                                                    {"d2d", trace::MemcpyDirection::kDeviceToDevice}},
                                                   trace::MemcpyDirection::kUnknown);
    call.host_memory = Named<trace::HostMemory>(
        c, "host", {{"pageable", trace::HostMemory::kPageable}, {"pinned", trace::HostMemory::kPinned}},
        trace::HostMemory::kNotApplicable);
    if (c.contains("kernel")) call.kernel_name = trace_->Intern(c["kernel"].get<std::string>());
    if (c.contains("grid")) call.grid = c["grid"].get<std::array<uint32_t, 3>>();
    if (c.contains("block")) call.block = c["block"].get<std::array<uint32_t, 3>>();
    call.graph_id = c.value("graph", 0u);
    call.node_count = c.value("nodes", 0u);
    call.other_stream_id = c.value("other_stream", 0u);
    if (c.contains("bt")) {
      trace::Backtrace backtrace;
      for (const std::string frame : c["bt"]) backtrace.frames.push_back(trace_->Intern(frame));
      trace_->backtraces.push_back(backtrace);
      call.backtrace = static_cast<trace::BacktraceId>(trace_->backtraces.size());
    }
    // "run": [delay, duration] adds what the GPU ran: the kernel of a launch, the whole graph of a graph launch.
    if (c.contains("run")) {
      const uint64_t start = call.start_ns + c["run"][0].get<uint64_t>();
      const uint64_t end = start + c["run"][1].get<uint64_t>();
      if (call.kind == trace::ApiKind::kGraphLaunch) {
        trace::GraphLaunchActivity g;
        g.correlation_id = call.correlation_id;
        g.start_ns = start;
        g.end_ns = end;
        g.stream_id = call.stream_id;
        g.graph_id = static_cast<uint32_t>(call.graph_id);
        trace_->graph_launches.push_back(g);
      } else {
        trace::KernelRecord k;
        k.correlation_id = call.correlation_id;
        k.start_ns = start;
        k.end_ns = end;
        k.stream_id = call.stream_id;
        k.name = call.kernel_name;
        k.grid = call.grid;
        k.block = call.block;
        trace_->AddKernel(k);
      }
    }
    calls_.push_back(call);
  }

  void AddNvtx(const nlohmann::json& e, uint64_t offset) {
    trace::NvtxEvent event;
    event.kind = Named<trace::NvtxEvent::Kind>(e, "kind",
                                               {{"push", trace::NvtxEvent::Kind::kPush},
                                                {"pop", trace::NvtxEvent::Kind::kPop},
                                                {"start", trace::NvtxEvent::Kind::kRangeStart},
                                                {"end", trace::NvtxEvent::Kind::kRangeEnd}},
                                               trace::NvtxEvent::Kind::kMark);
    event.thread_id = e.value("tid", 1u);
    event.time_ns = offset + e.at("t").get<uint64_t>();
    if (e.contains("msg")) event.message = trace_->Intern(e["msg"].get<std::string>());
    event.range_id = e.value("id", 0u);
    trace_->nvtx.push_back(event);
  }

  // A capture-begin event of the Python probe: who began the capture on this thread next.
  void AddProbe(const nlohmann::json& e) {
    trace::ProbeEvent event;
    if (e.value("kind", "capture-begin") != "capture-begin") throw std::runtime_error("probe: only capture-begin");
    event.kind = trace::ProbeEventKind::kCaptureBegin;
    const std::string origin = e.value("origin", "unknown");
    for (uint8_t o = 0; o <= trace::kMaxProbeOrigin; ++o) {
      if (trace::ProbeOriginName(static_cast<trace::ProbeOrigin>(o)) == origin) {
        event.origin = static_cast<trace::ProbeOrigin>(o);
      }
    }
    event.thread_id = e.value("tid", 1u);
    event.time_ns = e.at("t").get<uint64_t>();
    event.graph = e.value("graph", 0u);
    trace_->probe_events.push_back(event);
  }

  trace::Trace* trace_ = nullptr;
  std::vector<trace::ApiCallRecord> calls_;  // added to the trace in start order once all are read
  uint64_t correlation_ = 0;
};

// One line per finding (severity, check, where, how many consequences and evidence lines), then one per metric.
inline std::string ExpectedText(const checks::AnalysisResult& result) {
  std::string text;
  for (const Finding& f : result.findings) {
    absl::StrAppend(&text, SeverityName(f.severity), " ", f.check_id);
    if (!f.where.api.empty()) absl::StrAppend(&text, " api=", f.where.api);
    if (f.where.thread_id) absl::StrAppend(&text, " thread=", *f.where.thread_id);
    if (f.where.stream_id) absl::StrAppend(&text, " stream=", *f.where.stream_id);
    if (!f.where.nvtx_path.empty()) absl::StrAppend(&text, " nvtx=", f.where.nvtx_path);
    if (!f.where.torch_op.empty()) absl::StrAppend(&text, " op=", f.where.torch_op);
    if (f.where.line != 0) absl::StrAppend(&text, " ", f.where.file, ":", f.where.line);
    absl::StrAppend(&text, " consequences=", f.consequences.size(), " evidence=", f.evidence.size(), "\n");
  }
  for (const Metric& m : result.metrics)
    absl::StrAppend(&text, absl::StrFormat("metric %s %.6g\n", m.ScopedName(), m.value));
  // The coverage section as the text report prints it (its first 10 steps).
  if (result.coverage) absl::StrAppend(&text, "coverage\n", CoverageText(*result.coverage, 10));
  return text;
}

}  // namespace graphcheck::golden

#endif  // GRAPHCHECK_TESTS_GOLDEN_GOLDEN_TRACE_H_
