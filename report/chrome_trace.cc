// Chrome trace JSON export (see chrome_trace.h for what goes where). Events are serialized one at a time into the
// output string, so memory stays proportional to the output, not to a DOM of the whole timeline.
#include "report/chrome_trace.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "trace/captured_nodes.h"
#include "trace/python_frames.h"

namespace graphcheck {
namespace {

using nlohmann::json;
using trace::ApiCall;
using trace::ApiKind;
using trace::Trace;

// Synthetic thread ids for GPU tracks, above any OS thread id (Linux pid_max is at most 2^22).
constexpr int64_t kStreamTrackBase = int64_t{1} << 30;
constexpr int64_t kCaptureTrackBase = kStreamTrackBase + (int64_t{1} << 24);
constexpr int64_t kLaunchWindowTrack = kCaptureTrackBase + (int64_t{1} << 24);
// Synthetic process ids for traces whose pid is 0 or already taken by another trace (two hosts, same pid).
constexpr int64_t kSyntheticPidBase = int64_t{1} << 23;

class JsonEvents {
 public:
  explicit JsonEvents(uint64_t origin_ns)
      : origin_ns_(origin_ns), out_("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n") {}

  void Add(const json& event) {
    if (!first_) out_ += ",\n";
    first_ = false;
    // Program strings may not be valid UTF-8: replace rather than throw.
    out_ += event.dump(-1, ' ', false, json::error_handler_t::replace);
  }
  // Microseconds since the origin; signed, so an event stamped 0 by its source stays representable.
  double Us(uint64_t ns) const { return static_cast<double>(static_cast<int64_t>(ns - origin_ns_)) / 1000.0; }
  static double DurationUs(uint64_t start, uint64_t end) {
    return end > start ? static_cast<double>(end - start) / 1000.0 : 0.0;
  }
  uint64_t NextFlowId() { return ++flow_ids_; }
  std::string Finish() && { return std::move(out_) + "\n]}\n"; }

 private:
  const uint64_t origin_ns_;
  std::string out_;
  bool first_ = true;
  uint64_t flow_ids_ = 0;
};

// Exports one trace as one Chrome process.
class ProcessExport {
 public:
  ProcessExport(const Trace& trace, int64_t pid, const CallLocator& locate, JsonEvents* events)
      : trace_(trace), pid_(pid), locate_(locate), events_(*events), captured_nodes_(trace) {}

  void Run() {
    Metadata();
    for (const ApiCall& call : trace_.api_calls) ApiCallSlice(call);
    GpuWork();
    CaptureWindows();
    LaunchWindows();
    Nvtx();
  }

 private:
  json Event(const char* ph, absl::string_view name, absl::string_view cat, int64_t tid, uint64_t ts_ns) const {
    return json{{"ph", ph}, {"name", name}, {"cat", cat}, {"pid", pid_}, {"tid", tid}, {"ts", events_.Us(ts_ns)}};
  }
  json Slice(absl::string_view name, absl::string_view cat, int64_t tid, uint64_t start, uint64_t end) const {
    json e = Event("X", name, cat, tid, start);
    e["dur"] = JsonEvents::DurationUs(start, end);
    return e;
  }
  void Meta(const char* what, int64_t tid, json args) {
    events_.Add(json{{"ph", "M"}, {"name", what}, {"pid", pid_}, {"tid", tid}, {"args", std::move(args)}});
  }

  void Metadata() {
    const trace::ProcessInfo& p = trace_.process;
    std::string name = p.command_line.empty() ? "process" : p.command_line.front();
    if (p.command_line.size() > 1) absl::StrAppend(&name, " ", p.command_line[1]);
    absl::StrAppend(&name, " (pid ", p.pid);
    if (p.rank >= 0) absl::StrAppend(&name, ", rank ", p.rank);
    absl::StrAppend(&name, ")");
    Meta("process_name", 0, {{"name", name}});
    Meta("process_labels", 0, {{"labels", absl::StrCat(p.hostname, " ", absl::StrJoin(p.command_line, " "))}});
    if (p.rank >= 0) Meta("process_sort_index", 0, {{"sort_index", p.rank}});
  }

  void ApiCallSlice(const ApiCall& c) {
    const trace::CallDetail& d = trace_.Detail(c);
    json e = Slice(trace_.String(d.name), "cuda_api", c.thread_id, c.start_ns, c.end_ns);
    json& args = e["args"];
    args["kind"] = trace::ApiKindName(c.kind);
    if (c.correlation_id != 0) args["correlation"] = c.correlation_id;
    if (d.return_code != 0) args["return_code"] = d.return_code;
    if (c.stream_id != 0) args["stream"] = c.stream_id;
    if (d.legacy_stream) args["legacy_stream"] = true;
    if (c.capture_status == trace::CaptureStatus::kActive) args["capturing"] = true;
    if (c.capture_status == trace::CaptureStatus::kInvalidated) args["capture_invalidated"] = true;
    if (c.capture_id != 0) args["capture_id"] = c.capture_id;
    if (d.kernel_name != 0) args["kernel"] = trace_.String(d.kernel_name);
    if (d.grid != std::array<uint32_t, 3>{}) args["grid"] = d.grid;
    if (d.block != std::array<uint32_t, 3>{}) args["block"] = d.block;
    if (d.bytes != 0) args["bytes"] = d.bytes;
    if (d.graph_id != 0) args["graph"] = d.graph_id;
    if (d.node_count != 0) args["nodes"] = d.node_count;
    if (const trace::Backtrace* bt = trace_.FindBacktrace(d.backtrace); bt != nullptr && !bt->frames.empty()) {
      args["backtrace"] = trace_.String(bt->frames.front());
    }
    events_.Add(e);
    if (c.correlation_id != 0) launches_.emplace(c.correlation_id, &c);
  }

  int64_t StreamTrack(uint32_t device, uint64_t stream) {
    auto [it, inserted] = stream_tracks_.try_emplace({device, stream}, kStreamTrackBase + stream_tracks_.size());
    if (inserted) {
      Meta("thread_name", it->second, {{"name", absl::StrCat("GPU ", device, " stream ", stream)}});
      Meta("thread_sort_index", it->second, {{"sort_index", it->second}});
    }
    return it->second;
  }

  // A flow arrow from the API call with this correlation id to the GPU work it caused.
  void Flow(uint64_t correlation, int64_t track, uint64_t gpu_start) {
    if (correlation == 0) return;
    auto it = launches_.find(correlation);
    if (it == launches_.end()) return;
    const uint64_t id = events_.NextFlowId();
    json start = Event("s", "launch", "launch", it->second->thread_id, it->second->start_ns);
    start["id"] = id;
    events_.Add(start);
    json finish = Event("f", "launch", "launch", track, gpu_start);
    finish["id"] = id;
    finish["bp"] = "e";
    events_.Add(finish);
  }

  void GpuWork() {
    for (const trace::KernelActivity& k : trace_.kernels) {
      const trace::KernelShape& shape = trace_.Shape(k);
      const int64_t track = StreamTrack(shape.device, k.stream_id);
      json e = Slice(trace_.String(shape.name), "kernel", track, k.start_ns, k.end_ns);
      e["args"] = {{"grid", shape.grid}, {"block", shape.block}, {"correlation", k.correlation_id}};
      if (k.graph_id != 0) {
        e["args"]["graph"] = k.graph_id;
        e["args"]["node"] = shape.graph_node_id;
        if (const std::optional<size_t> launch = captured_nodes_.LaunchOf(k)) e["args"]["captured"] = Captured(*launch);
      }
      events_.Add(e);
      Flow(k.correlation_id, track, k.start_ns);
    }
    for (const trace::MemoryActivity& m : trace_.memory) {
      const int64_t track = StreamTrack(m.device, m.stream_id);
      const bool memcpy = m.kind == trace::MemoryActivity::Kind::kMemcpy;
      json e = Slice(memcpy ? "memcpy" : "memset", memcpy ? "memcpy" : "memset", track, m.start_ns, m.end_ns);
      e["args"] = {{"bytes", m.bytes}, {"correlation", m.correlation_id}};
      if (m.host_memory == trace::HostMemory::kPageable) e["args"]["pageable"] = true;
      events_.Add(e);
      Flow(m.correlation_id, track, m.start_ns);
    }
    for (const trace::GraphLaunchActivity& g : trace_.graph_launches) {
      const int64_t track = StreamTrack(g.device, g.stream_id);
      json e = Slice(absl::StrCat("graph ", g.graph_id), "graph", track, g.start_ns, g.end_ns);
      e["args"] = {{"graph", g.graph_id}, {"correlation", g.correlation_id}};
      events_.Add(e);
      Flow(g.correlation_id, track, g.start_ns);
    }
  }

  // Where the capture-time launch `call` was made, once per call (a graph's nodes run at every replay).
  const json& Captured(size_t call) {
    auto [it, added] = captured_.try_emplace(call);
    if (!added) return it->second;
    const ApiCall& launch = trace_.api_calls[call];
    json& captured = it->second;
    captured["call"] = trace_.String(trace_.Detail(launch).name);
    captured["correlation"] = launch.correlation_id;
    captured["thread"] = launch.thread_id;
    if (locate_) {
      const Location where = locate_(trace_, call);
      if (!where.python.empty()) captured["python"] = trace::ProgramSite(where.python);
      if (!where.torch_op.empty()) captured["op"] = where.torch_op;
      if (!where.nvtx_path.empty()) captured["nvtx"] = where.nvtx_path;
    } else if (const std::string site =
                   trace::ProgramSite(trace::PythonFrames(trace_, trace_.Detail(launch).python_stack));
               !site.empty()) {
      captured["python"] = site;
    }
    return captured;
  }

  // Capture begin to capture end on the same stream; a capture never ended runs to the end of the trace.
  void CaptureWindows() {
    std::map<uint64_t, const ApiCall*> open;
    uint64_t trace_end = 0;
    for (const ApiCall& c : trace_.api_calls) {
      trace_end = std::max(trace_end, c.end_ns);
      if (c.kind == ApiKind::kCaptureBegin && trace_.Detail(c).return_code == 0) {
        open[c.stream_id] = &c;
      } else if (c.kind == ApiKind::kCaptureEnd) {
        auto it = open.find(c.stream_id);
        if (it == open.end()) continue;
        CaptureWindow(*it->second, &c, c.end_ns);
        open.erase(it);
      }
    }
    for (const auto& [stream, begin] : open) CaptureWindow(*begin, nullptr, trace_end);
  }

  // A sampling recorder's windows: outside them, eager launches and GPU work are missing from the other tracks.
  void LaunchWindows() {
    if (trace_.launch_windows.empty()) return;
    Meta("thread_name", kLaunchWindowTrack, {{"name", "graphcheck: launches recorded (sampling windows)"}});
    uint64_t trace_end = 0;
    for (const ApiCall& c : trace_.api_calls) trace_end = std::max(trace_end, c.end_ns);
    for (const trace::LaunchWindow& w : trace_.launch_windows) {
      events_.Add(Slice("launches recorded", "recorder", kLaunchWindowTrack, w.start_ns,
                        std::min(w.end_ns, std::max(trace_end, w.start_ns))));
    }
  }

  void CaptureWindow(const ApiCall& begin, const ApiCall* end, uint64_t end_ns) {
    auto [it, inserted] = capture_tracks_.try_emplace(begin.stream_id, kCaptureTrackBase + capture_tracks_.size());
    if (inserted) Meta("thread_name", it->second, {{"name", absl::StrCat("capture on stream ", begin.stream_id)}});
    json e = Slice("capture", "capture", it->second, begin.start_ns, end_ns);
    json& args = e["args"];
    args["stream"] = begin.stream_id;
    args["thread"] = begin.thread_id;
    if (begin.capture_id != 0) args["capture_id"] = begin.capture_id;
    if (end == nullptr) {
      args["ended"] = false;
    } else {
      const trace::CallDetail& d = trace_.Detail(*end);
      if (d.return_code != 0) args["end_return_code"] = d.return_code;
      if (d.graph_id != 0) args["graph"] = d.graph_id;
      if (d.node_count != 0) args["nodes"] = d.node_count;
    }
    events_.Add(e);
  }

  void Nvtx() {
    absl::flat_hash_map<uint64_t, trace::StringId> open_ranges;  // range id -> message, for the end's name
    for (const trace::NvtxEvent& n : trace_.nvtx) {
      const absl::string_view domain = n.domain == 0 ? "nvtx" : trace_.String(n.domain);
      switch (n.kind) {
        case trace::NvtxEvent::Kind::kPush:
          events_.Add(Event("B", trace_.String(n.message), domain, n.thread_id, n.time_ns));
          break;
        case trace::NvtxEvent::Kind::kPop:
          events_.Add(Event("E", "", domain, n.thread_id, n.time_ns));
          break;
        case trace::NvtxEvent::Kind::kRangeStart:
        case trace::NvtxEvent::Kind::kRangeEnd: {
          const bool start = n.kind == trace::NvtxEvent::Kind::kRangeStart;
          trace::StringId message = n.message;
          if (start) {
            open_ranges[n.range_id] = n.message;
          } else if (auto it = open_ranges.find(n.range_id); it != open_ranges.end()) {
            message = it->second;
            open_ranges.erase(it);
          }
          json e = Event(start ? "b" : "e", trace_.String(message), domain, n.thread_id, n.time_ns);
          e["id2"] = {{"local", n.range_id}};
          events_.Add(e);
          break;
        }
        case trace::NvtxEvent::Kind::kMark: {
          json e = Event("i", trace_.String(n.message), domain, n.thread_id, n.time_ns);
          e["s"] = "t";
          events_.Add(e);
          break;
        }
      }
    }
  }

  const Trace& trace_;
  const int64_t pid_;
  const CallLocator& locate_;
  JsonEvents& events_;
  const trace::CapturedNodes captured_nodes_;
  absl::flat_hash_map<size_t, json> captured_;              // capture-time launch call -> its "captured" argument
  absl::flat_hash_map<uint64_t, const ApiCall*> launches_;  // correlation id -> API call
  std::map<std::pair<uint32_t, uint64_t>, int64_t> stream_tracks_;
  std::map<uint64_t, int64_t> capture_tracks_;
};

uint64_t EarliestTime(const std::vector<const Trace*>& traces) {
  uint64_t origin = std::numeric_limits<uint64_t>::max();
  auto consider = [&](uint64_t t) {
    if (t != 0) origin = std::min(origin, t);
  };
  for (const Trace* t : traces) {
    for (const auto& c : t->api_calls) consider(c.start_ns);
    for (const auto& k : t->kernels) consider(k.start_ns);
    for (const auto& m : t->memory) consider(m.start_ns);
    for (const auto& g : t->graph_launches) consider(g.start_ns);
    for (const auto& n : t->nvtx) consider(n.time_ns);
  }
  return origin == std::numeric_limits<uint64_t>::max() ? 0 : origin;
}

}  // namespace

std::string TraceToChromeJson(const std::vector<const trace::Trace*>& traces, const CallLocator& locate) {
  JsonEvents events(EarliestTime(traces));
  std::set<int64_t> pids;
  int64_t next_synthetic = kSyntheticPidBase;
  for (const Trace* t : traces) {
    int64_t pid = t->process.pid;
    if (pid == 0 || pids.count(pid) != 0) {
      while (pids.count(next_synthetic) != 0) ++next_synthetic;
      pid = next_synthetic;
    }
    pids.insert(pid);
    ProcessExport(*t, pid, locate, &events).Run();
  }
  return std::move(events).Finish();
}

}  // namespace graphcheck
