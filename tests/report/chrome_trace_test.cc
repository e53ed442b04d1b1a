// Chrome trace export: tracks, capture windows, NVTX, flow arrows, several processes, and escaping of program strings.
#include "report/chrome_trace.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

namespace graphcheck {
namespace {

using nlohmann::json;
using trace::ApiCallRecord;
using trace::ApiKind;
using trace::NvtxEvent;
using trace::Trace;

constexpr uint64_t kT0 = 1'700'000'000'000'000'000ull;

ApiCallRecord Call(Trace& t, const char* name, ApiKind kind, uint64_t start, uint64_t end, uint64_t stream,
                   uint32_t tid) {
  ApiCallRecord c;
  c.name = t.Intern(name);
  c.kind = kind;
  c.start_ns = kT0 + start;
  c.end_ns = kT0 + end;
  c.stream_id = stream;
  c.thread_id = tid;
  return c;
}

Trace SampleTrace() {
  Trace t;
  t.process.pid = 4321;
  t.process.rank = 0;
  t.process.command_line = {"python", "train.py"};
  ApiCallRecord launch = Call(t, "cudaLaunchKernel", ApiKind::kKernelLaunch, 1'000, 4'000, 7, 100);
  launch.correlation_id = 55;
  t.AddCall(launch);
  t.AddCall(Call(t, "cudaStreamBeginCapture", ApiKind::kCaptureBegin, 10'000, 11'000, 9, 100));
  ApiCallRecord end = Call(t, "cudaStreamEndCapture", ApiKind::kCaptureEnd, 20'000, 25'500, 9, 100);
  end.node_count = 12;
  t.AddCall(end);
  t.AddCall(Call(t, "cudaStreamBeginCapture", ApiKind::kCaptureBegin, 30'000, 31'000, 11, 200));
  t.AddCall(Call(t, "cudaStreamSynchronize", ApiKind::kStreamSynchronize, 40'000, 50'000, 11, 200));

  trace::KernelRecord k;
  k.correlation_id = 55;
  k.start_ns = kT0 + 6'000;
  k.end_ns = kT0 + 9'000;
  k.stream_id = 7;
  k.name = t.Intern("void kernel<\"quoted\", '\\'>\n\xff(bad utf-8)");
  t.AddKernel(k);

  const trace::StringId step = t.Intern("step 1");
  t.nvtx.push_back(NvtxEvent{NvtxEvent::Kind::kPush, 100, kT0 + 500, 0, step, 0});
  t.nvtx.push_back(NvtxEvent{NvtxEvent::Kind::kPop, 100, kT0 + 60'000, 0, 0, 0});
  t.nvtx.push_back(NvtxEvent{NvtxEvent::Kind::kRangeStart, 100, kT0 + 700, 0, t.Intern("epoch"), 77});
  t.nvtx.push_back(NvtxEvent{NvtxEvent::Kind::kRangeEnd, 200, kT0 + 70'000, 0, 0, 77});
  return t;
}

std::vector<json> Find(const json& doc, const std::string& ph, const std::string& cat = "") {
  std::vector<json> found;
  for (const json& e : doc["traceEvents"]) {
    if (e["ph"] == ph && (cat.empty() || e.value("cat", "") == cat)) found.push_back(e);
  }
  return found;
}

TEST(ChromeTraceTest, ProducesTracksCapturesNvtxAndFlows) {
  const Trace t = SampleTrace();
  const json doc = json::parse(TraceToChromeJson({&t}));

  const std::vector<json> api = Find(doc, "X", "cuda_api");
  ASSERT_EQ(api.size(), 5u);
  EXPECT_EQ(api[0]["name"], "cudaLaunchKernel");
  EXPECT_EQ(api[0]["pid"], 4321);
  EXPECT_EQ(api[0]["tid"], 100);
  EXPECT_DOUBLE_EQ(api[0]["ts"].get<double>(), 0.5);  // origin: the earliest event (the NVTX push at +500 ns)
  EXPECT_DOUBLE_EQ(api[0]["dur"].get<double>(), 3.0);

  const std::vector<json> kernels = Find(doc, "X", "kernel");
  ASSERT_EQ(kernels.size(), 1u);
  const int64_t stream_track = kernels[0]["tid"];
  EXPECT_GE(stream_track, int64_t{1} << 30);
  // Escaped in the JSON, intact after parsing; the invalid byte replaced.
  EXPECT_EQ(kernels[0]["name"], "void kernel<\"quoted\", '\\'>\n\xef\xbf\xbd(bad utf-8)");
  bool named = false;
  for (const json& m : Find(doc, "M")) {
    if (m["name"] == "thread_name" && m["tid"] == stream_track) named = m["args"]["name"] == "GPU 0 stream 7";
  }
  EXPECT_TRUE(named);

  const std::vector<json> starts = Find(doc, "s"), finishes = Find(doc, "f");
  ASSERT_EQ(starts.size(), 1u);
  ASSERT_EQ(finishes.size(), 1u);
  EXPECT_EQ(starts[0]["id"], finishes[0]["id"]);
  EXPECT_EQ(starts[0]["tid"], 100);
  EXPECT_EQ(finishes[0]["tid"], stream_track);
  EXPECT_EQ(finishes[0]["bp"], "e");

  const std::vector<json> captures = Find(doc, "X", "capture");
  ASSERT_EQ(captures.size(), 2u);
  EXPECT_DOUBLE_EQ(captures[0]["ts"].get<double>(), 9.5);
  EXPECT_DOUBLE_EQ(captures[0]["dur"].get<double>(), 15.5);  // begin start to end end
  EXPECT_EQ(captures[0]["args"]["nodes"], 12);
  EXPECT_EQ(captures[1]["args"]["stream"], 11);
  EXPECT_EQ(captures[1]["args"]["ended"], false);  // never ended: runs to the end of the trace
  EXPECT_DOUBLE_EQ(captures[1]["dur"].get<double>(), 20.0);
  EXPECT_NE(captures[0]["tid"], captures[1]["tid"]);

  ASSERT_EQ(Find(doc, "B").size(), 1u);
  EXPECT_EQ(Find(doc, "B")[0]["name"], "step 1");
  ASSERT_EQ(Find(doc, "E").size(), 1u);
  const std::vector<json> range_start = Find(doc, "b"), range_end = Find(doc, "e");
  ASSERT_EQ(range_start.size(), 1u);
  ASSERT_EQ(range_end.size(), 1u);
  EXPECT_EQ(range_start[0]["id2"], range_end[0]["id2"]);
  EXPECT_EQ(range_end[0]["name"], "epoch");  // the end takes its start's name, so the two match
  EXPECT_EQ(range_end[0]["tid"], 200);
}

TEST(ChromeTraceTest, SamplingWindowsGetATrackOfTheirOwn) {
  Trace t = SampleTrace();
  EXPECT_TRUE(Find(json::parse(TraceToChromeJson({&t})), "X", "recorder").empty());
  t.recorder.launches = trace::LaunchRecording::kSampled;
  t.launch_windows = {{kT0 + 1000, kT0 + 3000}, {kT0 + 9000, ~uint64_t{0}}};  // the last open at the end
  const json doc = json::parse(TraceToChromeJson({&t}));
  const std::vector<json> windows = Find(doc, "X", "recorder");
  ASSERT_EQ(windows.size(), 2u);
  EXPECT_DOUBLE_EQ(windows[0]["dur"].get<double>(), 2.0);
  EXPECT_GT(windows[1]["dur"].get<double>(), 0.0);
  EXPECT_LT(windows[1]["dur"].get<double>(), 1e6);  // cut at the end of the trace
  EXPECT_EQ(windows[0]["tid"], windows[1]["tid"]);
}

TEST(ChromeTraceTest, SeveralTracesBecomeSeveralProcesses) {
  const Trace a = SampleTrace();
  Trace b = SampleTrace();  // same pid: another host
  Trace c;                  // no pid recorded
  const json doc = json::parse(TraceToChromeJson({&a, &b, &c}));
  std::set<int64_t> pids;
  for (const json& m : Find(doc, "M")) {
    if (m["name"] == "process_name") pids.insert(m["pid"].get<int64_t>());
  }
  EXPECT_EQ(pids.size(), 3u);
  EXPECT_EQ(pids.count(4321), 1u);
  EXPECT_EQ(Find(doc, "X", "kernel").size(), 2u);
  // Flow ids stay unique across processes.
  const std::vector<json> starts = Find(doc, "s");
  ASSERT_EQ(starts.size(), 2u);
  EXPECT_NE(starts[0]["id"], starts[1]["id"]);
}

// A capture of one kernel at train.py:12 and a replay of it: the replayed kernel, inside its replay on the stream's
// track, names the capture-time launch, its line, and with a locator (the analysis layer's, in cli) the operator and
// NVTX range.
TEST(ChromeTraceTest, AReplayedKernelNamesWhereItsNodeWasCaptured) {
  Trace t;
  t.process.pid = 4321;
  ApiCallRecord begin = Call(t, "cudaStreamBeginCapture", ApiKind::kCaptureBegin, 1'000, 2'000, 9, 100);
  begin.capture_status = trace::CaptureStatus::kActive;
  begin.capture_id = 1;
  t.AddCall(begin);
  ApiCallRecord launch = Call(t, "cudaLaunchKernel", ApiKind::kKernelLaunch, 3'000, 4'000, 9, 100);
  launch.capture_status = trace::CaptureStatus::kActive;
  launch.capture_id = 1;
  launch.correlation_id = 60;
  launch.kernel_name = t.Intern("gemm");
  t.python_stacks.push_back({{{t.Intern("/home/me/train.py"), 12, t.Intern("step")}}});
  launch.python_stack = static_cast<trace::PythonStackId>(t.python_stacks.size());
  t.AddCall(launch);
  ApiCallRecord end = Call(t, "cudaStreamEndCapture", ApiKind::kCaptureEnd, 5'000, 6'000, 9, 100);
  end.capture_status = trace::CaptureStatus::kActive;
  end.capture_id = 1;
  end.graph_id = 1;
  t.AddCall(end);
  ApiCallRecord replay = Call(t, "cudaGraphLaunch", ApiKind::kGraphLaunch, 10'000, 11'000, 7, 100);
  replay.correlation_id = 70;
  replay.graph_id = 1;
  t.AddCall(replay);
  trace::KernelRecord k;
  k.name = t.Intern("gemm");
  k.correlation_id = 70;
  k.start_ns = kT0 + 12'000;
  k.end_ns = kT0 + 15'000;
  k.stream_id = 7;
  k.graph_id = 2;
  k.graph_node_id = (uint64_t{2} << 32) + 0;
  t.AddKernel(k);
  trace::DeriveGraphLaunches(&t);  // as the reader does for traces without CUPTI's graph-level records

  auto replayed = [](const json& doc) {
    for (const json& e : doc["traceEvents"]) {
      if (e.value("cat", "") == "kernel") return e;
    }
    return json();
  };
  const json plain = replayed(json::parse(TraceToChromeJson({&t})))["args"]["captured"];
  EXPECT_EQ(plain["call"], "cudaLaunchKernel");
  EXPECT_EQ(plain["correlation"], 60);
  EXPECT_EQ(plain["python"], "/home/me/train.py:12 in step");
  EXPECT_FALSE(plain.contains("op"));

  const CallLocator locate = [](const Trace&, size_t) {
    Location where;
    where.python = {{"/home/me/train.py", 12, "step", true}};
    where.torch_op = "aten::mm";
    where.nvtx_path = "train_step/forward";
    return where;
  };
  const json doc = json::parse(TraceToChromeJson({&t}, locate));
  const json located = replayed(doc)["args"]["captured"];
  EXPECT_EQ(located["op"], "aten::mm");
  EXPECT_EQ(located["nvtx"], "train_step/forward");
  EXPECT_EQ(located["python"], "/home/me/train.py:12 in step");
  // Under its replay: the replay's slice, derived from its kernels, spans the kernel on the same track.
  const std::vector<json> graphs = Find(doc, "X", "graph");
  ASSERT_EQ(graphs.size(), 1u);
  EXPECT_EQ(graphs[0]["tid"], replayed(doc)["tid"]);
  EXPECT_LE(graphs[0]["ts"].get<double>(), replayed(doc)["ts"].get<double>());
}

TEST(ChromeTraceTest, EmptyInputIsAnEmptyValidTrace) {
  const json doc = json::parse(TraceToChromeJson({}));
  EXPECT_TRUE(doc["traceEvents"].empty());
}

}  // namespace
}  // namespace graphcheck
