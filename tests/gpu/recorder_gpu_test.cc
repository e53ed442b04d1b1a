// GPU tests of the recorder (label gpu): programs with a clean capture and with planted defects run under
// `graphcheck run`, and the traces must hold the right capture windows, failing calls, return codes, threads and
// backtraces. Without a GPU every test skips with a message.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "report/json.h"
#include "tests/gpu/gpu_test_env.h"
#include "trace/trace_reader.h"

namespace graphcheck {
namespace {

// Assertions read whole call records (CallRecords), not the trace's split in-memory calls.
using ApiCall = trace::ApiCallRecord;
using trace::ApiKind;
using trace::CaptureStatus;
using trace::Trace;

constexpr int kCaptureUnsupported = 900;
constexpr int kCaptureInvalidated = 901;
constexpr int kCaptureUnjoined = 904;

using gpu_test::BuildDir;
using gpu_test::HasGpu;
using gpu_test::SourceDir;

bool HasTorchCuda() {
  return std::system(
             "python3 -c 'import torch,sys; sys.exit(0 if torch.cuda.is_available() else 1)' "
             ">/dev/null 2>&1") == 0;
}

struct Recorded {
  int graphcheck_status = -1;
  std::string report_json;
  std::vector<Trace> traces;
  const Trace& Main() const { return traces.front(); }
};

Recorded RunUnderGraphcheck(const std::string& name, const std::string& command, const std::string& flags = "") {
  const std::string dir = absl::StrCat(::testing::TempDir(), "/gpu-", name, "-", getpid());
  std::filesystem::remove_all(dir);
  const std::string cmd = absl::StrCat(BuildDir(), "/graphcheck run ", flags, " --trace-dir ", dir,
                                       " --format json -o ", dir, ".json --fail-on never -- ", command);
  Recorded recorded;
  recorded.graphcheck_status = WEXITSTATUS(std::system(cmd.c_str()));
  std::ifstream report(dir + ".json");
  std::stringstream text;
  text << report.rdbuf();
  recorded.report_json = text.str();
  std::vector<std::string> paths;
  if (std::filesystem::exists(dir)) {
    for (const auto& entry : std::filesystem::directory_iterator(dir)) paths.push_back(entry.path().string());
  }
  std::sort(paths.begin(), paths.end());
  for (const std::string& path : paths) {
    absl::StatusOr<Trace> trace = trace::ReadTrace(path);
    EXPECT_TRUE(trace.ok()) << trace.status();
    if (trace.ok()) recorded.traces.push_back(*std::move(trace));
  }
  return recorded;
}

// Whole records made for the traces of the running test (cleared in SetUp: a test's traces live until it ends).
std::map<const Trace*, std::vector<ApiCall>>& CallRecordCache() {
  static auto* const cache = new std::map<const Trace*, std::vector<ApiCall>>();
  return *cache;
}

// The calls of `trace` as whole records, made once per trace.
const std::vector<ApiCall>& CallRecords(const Trace& trace) {
  auto [it, inserted] = CallRecordCache().try_emplace(&trace);
  if (inserted) {
    for (const trace::ApiCall& call : trace.api_calls) it->second.push_back(trace.Record(call));
  }
  return it->second;
}

std::vector<const ApiCall*> Calls(const Trace& trace, ApiKind kind) {
  std::vector<const ApiCall*> out;
  for (const ApiCall& call : CallRecords(trace)) {
    if (call.kind == kind) out.push_back(&call);
  }
  return out;
}

std::string Frames(const Trace& trace, const ApiCall& call) {
  std::vector<std::string> frames;
  if (const trace::Backtrace* bt = trace.FindBacktrace(call.backtrace)) {
    for (trace::StringId id : bt->frames) frames.emplace_back(trace.String(id));
  }
  return absl::StrJoin(frames, "\n");
}

std::string Describe(const Trace& trace) {
  std::string out;
  for (const ApiCall& c : CallRecords(trace)) {
    if (c.kind == ApiKind::kKernelLaunch && c.capture_status == CaptureStatus::kNone) continue;
    absl::StrAppend(&out, trace.String(c.name), " kind=", trace::ApiKindName(c.kind), " rc=", c.return_code,
                    " tid=", c.thread_id, " stream=", c.stream_id, " capture=", static_cast<int>(c.capture_status), "/",
                    c.capture_id, " graph=", c.graph_id, " nodes=", c.node_count, "\n");
  }
  return out;
}

class RecorderGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    CallRecordCache().clear();
    if (!HasGpu()) GTEST_SKIP() << gpu_test::kNoGpu;
  }
};

class RecorderPythonGpuTest : public RecorderGpuTest {
 protected:
  void SetUp() override {
    RecorderGpuTest::SetUp();
    if (IsSkipped()) return;
    if (!HasTorchCuda()) GTEST_SKIP() << "python3 with CUDA-enabled torch not found";
  }
  Recorded RunPython(const std::string& mode) {
    return RunUnderGraphcheck("py-" + mode,
                              absl::StrCat("python3 ", SourceDir(), "/tests/gpu/programs/capture_cases.py ", mode));
  }
};

Recorded RunCpp(const std::string& mode, const std::string& flags = "") {
  std::string name = absl::StrCat("cpp-", mode, flags);
  std::replace_if(
      name.begin(), name.end(), [](char c) { return c == ' ' || c == ':'; }, '_');
  return RunUnderGraphcheck(name, absl::StrCat(BuildDir(), "/tests/gpu/gpu_capture_cases ", mode), flags);
}

// The checks shared by the clean programs: one capture window, begun and ended on one stream and thread, the graph
// it produced instantiated and launched, and its kernels seen by the GPU with that graph's id. A process that crashed
// right after its replays has no GPU activity for them (`activity_flushed` false): the crash handler is
// async-signal-safe and cannot ask CUPTI to flush, so only the API records of the replays are checked.
void ExpectCleanCapture(const Trace& trace, int launches, bool activity_flushed = true) {
  SCOPED_TRACE(Describe(trace));
  auto begins = Calls(trace, ApiKind::kCaptureBegin);
  auto ends = Calls(trace, ApiKind::kCaptureEnd);
  ASSERT_EQ(begins.size(), 1u);
  ASSERT_EQ(ends.size(), 1u);
  EXPECT_EQ(begins[0]->return_code, 0);
  EXPECT_EQ(ends[0]->return_code, 0);
  EXPECT_NE(begins[0]->capture_id, 0u);
  EXPECT_EQ(begins[0]->capture_id, ends[0]->capture_id);
  EXPECT_EQ(begins[0]->capture_mode, trace::CaptureMode::kGlobal);
  EXPECT_EQ(begins[0]->stream_id, ends[0]->stream_id);
  EXPECT_EQ(begins[0]->thread_id, ends[0]->thread_id);
  EXPECT_GT(ends[0]->node_count, 0u);
  EXPECT_NE(ends[0]->graph_id, 0u);
  int captured_launches = 0;
  for (const ApiCall& c : CallRecords(trace)) {
    if (c.kind == ApiKind::kKernelLaunch && c.start_ns > begins[0]->start_ns && c.end_ns < ends[0]->start_ns) {
      ++captured_launches;
      EXPECT_EQ(c.capture_status, CaptureStatus::kActive);
      EXPECT_EQ(c.capture_id, begins[0]->capture_id);
    }
  }
  EXPECT_GT(captured_launches, 0);
  auto graph_launches = Calls(trace, ApiKind::kGraphLaunch);
  ASSERT_EQ(static_cast<int>(graph_launches.size()), launches);
  for (const ApiCall* launch : graph_launches) {
    EXPECT_EQ(launch->return_code, 0);
    EXPECT_EQ(launch->graph_id, ends[0]->graph_id);
  }
  if (!activity_flushed) return;
  // Kernels of a replay carry the correlation id of their cudaGraphLaunch and a nonzero graph id.
  std::set<uint64_t> launch_correlations;
  for (const ApiCall* launch : graph_launches) launch_correlations.insert(launch->correlation_id);
  std::set<uint32_t> kernel_graph_ids;
  int graphed_kernels = 0;
  for (const trace::KernelActivity& k : trace.kernels) {
    if (launch_correlations.count(k.correlation_id) == 0) continue;
    ++graphed_kernels;
    kernel_graph_ids.insert(k.graph_id);
  }
  EXPECT_EQ(graphed_kernels, launches * captured_launches) << "replayed kernels, found by correlation id";
  EXPECT_EQ(kernel_graph_ids.size(), 1u) << "all replays run one executable graph";
  EXPECT_EQ(kernel_graph_ids.count(0), 0u);
  for (const trace::KernelActivity& k : trace.kernels) {
    if (launch_correlations.count(k.correlation_id) != 0) {
      EXPECT_EQ(k.stream_id, graph_launches[0]->stream_id) << "API and activity stream ids agree";
    }
  }
  std::printf("capture-end graph id %lu, replayed kernels' graph id %u\n",
              static_cast<unsigned long>(ends[0]->graph_id), kernel_graph_ids.empty() ? 0u : *kernel_graph_ids.begin());
  ASSERT_FALSE(trace.devices.empty());
  EXPECT_GE(trace.devices[0].gpu.cc_major, 7);
}

TEST_F(RecorderGpuTest, CppCleanCapture) {
  Recorded r = RunCpp("clean");
  ASSERT_EQ(r.traces.size(), 1u);
  ExpectCleanCapture(r.Main(), 3);
  EXPECT_TRUE(r.Main().recorder.subscribed);
  EXPECT_NE(r.Main().environment.Get("CUDA_INJECTION64_PATH"), nullptr);
}

TEST_F(RecorderGpuTest, CppSyncInCaptureRecordsTheFailingCallAndItsBacktrace) {
  Recorded r = RunCpp("sync-in-capture");
  ASSERT_EQ(r.traces.size(), 1u);
  const Trace& t = r.Main();
  SCOPED_TRACE(Describe(t));
  auto syncs = Calls(t, ApiKind::kStreamSynchronize);
  ASSERT_FALSE(syncs.empty());
  const ApiCall* sync = syncs.front();
  EXPECT_EQ(sync->return_code, kCaptureUnsupported);
  EXPECT_EQ(sync->capture_status, CaptureStatus::kActive);
  EXPECT_THAT(Frames(t, *sync), ::testing::HasSubstr("SyncInCapture"));
  auto ends = Calls(t, ApiKind::kCaptureEnd);
  ASSERT_EQ(ends.size(), 1u);
  EXPECT_EQ(ends[0]->return_code, kCaptureInvalidated);
  EXPECT_EQ(ends[0]->thread_id, sync->thread_id);
}

TEST_F(RecorderGpuTest, CppPageableCopyInCapture) {
  Recorded r = RunCpp("pageable-h2d");
  const Trace& t = r.Main();
  SCOPED_TRACE(Describe(t));
  auto copies = Calls(t, ApiKind::kMemcpyAsync);
  auto it = std::find_if(copies.begin(), copies.end(),
                         [](const ApiCall* c) { return c->capture_status != CaptureStatus::kNone; });
  ASSERT_NE(it, copies.end());
  EXPECT_EQ((*it)->host_memory, trace::HostMemory::kPageable);
  EXPECT_EQ((*it)->direction, trace::MemcpyDirection::kHostToDevice);
  EXPECT_FALSE(Frames(t, **it).empty());
}

TEST_F(RecorderGpuTest, CppUnjoinedStream) {
  Recorded r = RunCpp("unjoined-stream");
  const Trace& t = r.Main();
  SCOPED_TRACE(Describe(t));
  auto ends = Calls(t, ApiKind::kCaptureEnd);
  ASSERT_EQ(ends.size(), 1u);
  EXPECT_EQ(ends[0]->return_code, kCaptureUnjoined);
  auto waits = Calls(t, ApiKind::kStreamWaitEvent);
  ASSERT_FALSE(waits.empty());
  EXPECT_EQ(waits[0]->capture_status, CaptureStatus::kActive);  // the side stream joined the capture
  EXPECT_EQ(waits[0]->capture_id, ends[0]->capture_id);
  EXPECT_NE(waits[0]->stream_id, ends[0]->stream_id);
}

TEST_F(RecorderGpuTest, CppOtherThreadQueryDuringGlobalCapture) {
  Recorded r = RunCpp("other-thread-query");
  const Trace& t = r.Main();
  SCOPED_TRACE(Describe(t));
  auto begins = Calls(t, ApiKind::kCaptureBegin);
  ASSERT_EQ(begins.size(), 1u);
  auto queries = Calls(t, ApiKind::kEventQuery);
  auto other = std::find_if(queries.begin(), queries.end(),
                            [&](const ApiCall* q) { return q->thread_id != begins[0]->thread_id; });
  ASSERT_NE(other, queries.end());
  EXPECT_NE((*other)->return_code, 0);
  EXPECT_EQ((*other)->capture_status, CaptureStatus::kActive);
  EXPECT_EQ((*other)->capture_id, begins[0]->capture_id);
  EXPECT_FALSE(Frames(t, **other).empty());
  auto ends = Calls(t, ApiKind::kCaptureEnd);
  ASSERT_EQ(ends.size(), 1u);
  EXPECT_NE(ends[0]->return_code, 0);
}

TEST_F(RecorderGpuTest, CppCublasCreateInCaptureIsLazyInitialisation) {
  Recorded r = RunCpp("cublas-create-in-capture");
  const Trace& t = r.Main();
  SCOPED_TRACE(Describe(t));
  // cublasCreate frees and allocates device memory: refused in a global-mode capture, and the capture is lost.
  const ApiCall* refused = nullptr;
  for (const ApiCall& c : CallRecords(t)) {
    if ((c.kind == ApiKind::kFree || c.kind == ApiKind::kMalloc) && c.capture_status == CaptureStatus::kActive &&
        c.return_code == kCaptureUnsupported) {
      refused = &c;
      break;
    }
  }
  ASSERT_NE(refused, nullptr);
  EXPECT_THAT(Frames(t, *refused), ::testing::HasSubstr("cublasCreate"));
  auto ends = Calls(t, ApiKind::kCaptureEnd);
  ASSERT_EQ(ends.size(), 1u);
  EXPECT_EQ(ends[0]->return_code, kCaptureInvalidated);
  EXPECT_THAT(r.report_json, ::testing::HasSubstr("\"check_id\": \"warmup-insufficient\""));
  EXPECT_THAT(r.report_json, ::testing::HasSubstr("cuBLAS handle"));
}

TEST_F(RecorderGpuTest, CppModuleLoadInCaptureSucceedsAndIsNotFlagged) {
  Recorded r = RunCpp("module-load-in-capture");
  const Trace& t = r.Main();
  SCOPED_TRACE(Describe(t));
  auto loads = Calls(t, ApiKind::kModuleLoad);
  auto in_capture = std::find_if(loads.begin(), loads.end(),
                                 [](const ApiCall* c) { return c->capture_status == CaptureStatus::kActive; });
  ASSERT_NE(in_capture, loads.end()) << "cuModuleLoadData inside the capture is recorded";
  EXPECT_EQ((*in_capture)->return_code, 0) << "CUDA 13 loads modules during a capture";
  auto ends = Calls(t, ApiKind::kCaptureEnd);
  ASSERT_EQ(ends.size(), 1u);
  EXPECT_EQ(ends[0]->return_code, 0);
  EXPECT_THAT(r.report_json, ::testing::Not(::testing::HasSubstr("\"check_id\": \"warmup-insufficient\"")));
}

TEST_F(RecorderGpuTest, CppSegfaultAfterCaptureKeepsTheTrace) {
  Recorded r = RunCpp("segfault-after-capture");
  EXPECT_THAT(r.report_json, ::testing::HasSubstr("killed by signal 11"));
  ASSERT_EQ(r.traces.size(), 1u);
  EXPECT_EQ(r.Main().integrity.end, trace::TraceEnd::kCrashed);
  EXPECT_EQ(r.Main().integrity.signal, 11);
  EXPECT_THAT(r.report_json, ::testing::HasSubstr("The process died of SIGSEGV"));
  ExpectCleanCapture(r.Main(), 3, /*activity_flushed=*/false);
}

TEST_F(RecorderGpuTest, CppEagerLoopLosesNoKernel) {
  Recorded r = RunCpp("eager-loop", "--launches all");
  const Trace& t = r.Main();
  EXPECT_EQ(t.recorder.launches, trace::LaunchRecording::kAll);
  EXPECT_EQ(Calls(t, ApiKind::kKernelLaunch).size(), 800u);
  EXPECT_EQ(t.kernels.size(), 800u);
  // One kernel launched 800 times without NVTX: steps of 32 launches, launch-bound.
  EXPECT_THAT(r.report_json, ::testing::HasSubstr("\"check_id\": \"launch-bound\""));
}

// Sampled launches (the default mode, here with short windows): eager launches are recorded inside the windows only,
// each with its kernel's GPU times; a capture between windows is recorded whole; the analysis finds the steps inside
// the windows.
TEST_F(RecorderGpuTest, CppSampledLoopRecordsLaunchesInWindowsAndEveryCapture) {
  Recorded r = RunCpp("sampled-loop", "--sampling 0:100:400");
  ASSERT_EQ(r.traces.size(), 1u);
  const Trace& t = r.Main();
  SCOPED_TRACE(Describe(t));
  EXPECT_EQ(t.recorder.launches, trace::LaunchRecording::kSampled);
  ASSERT_GE(t.launch_windows.size(), 3u);  // the short first window, then about 320-420, 720-820, 1120-1220 ms
  std::set<uint64_t> kernel_correlations;
  for (const trace::KernelActivity& k : t.kernels) kernel_correlations.insert(k.correlation_id);
  // A launch entering just after callbacks were turned on (before the open edge's timestamp) or just as the window
  // closes (after the close edge's) is still recorded.
  constexpr uint64_t kSlackNs = 2000000;
  size_t eager = 0, inside = 0, with_kernel = 0, outside = 0;
  for (const ApiCall& c : CallRecords(t)) {
    if (c.kind != ApiKind::kKernelLaunch || c.capture_status != CaptureStatus::kNone) continue;
    ++eager;
    bool in_window = false, near_window = false;
    for (const trace::LaunchWindow& w : t.launch_windows) {
      in_window |= c.start_ns >= w.start_ns && c.end_ns <= w.end_ns;
      near_window |= c.start_ns + kSlackNs >= w.start_ns && c.start_ns <= w.end_ns + kSlackNs;
    }
    if (in_window) {
      ++inside;
      with_kernel += kernel_correlations.count(c.correlation_id);
    }
    if (!near_window) ++outside;
  }
  const size_t launched = 40 * Calls(t, ApiKind::kStreamSynchronize).size();  // a sync after every 40 launches
  std::printf("eager launches: %zu launched, %zu recorded, %zu inside windows (%zu with kernel times), %zu outside\n",
              launched, eager, inside, with_kernel, outside);
  EXPECT_GT(inside, 200u);
  EXPECT_EQ(with_kernel, inside) << "every launch inside a window has its kernel's GPU times";
  EXPECT_EQ(outside, 0u);
  EXPECT_LT(eager, launched / 2) << "sampling recorded only part of the launches";
  // Every capture is whole, also the one (at least) that fell between windows.
  auto begins = Calls(t, ApiKind::kCaptureBegin);
  auto ends = Calls(t, ApiKind::kCaptureEnd);
  ASSERT_EQ(begins.size(), 2u);
  ASSERT_EQ(ends.size(), 2u);
  EXPECT_FALSE(t.LaunchesRecorded(begins[0]->start_ns, begins[0]->end_ns) &&
               t.LaunchesRecorded(begins[1]->start_ns, begins[1]->end_ns))
      << "both captures fell inside windows";
  for (const ApiCall* end : ends) {
    EXPECT_EQ(end->return_code, 0);
    EXPECT_EQ(end->node_count, 5u);
  }
  size_t captured = 0;
  for (const ApiCall& c : CallRecords(t)) {
    captured += c.kind == ApiKind::kKernelLaunch && c.capture_status == CaptureStatus::kActive;
  }
  EXPECT_EQ(captured, 10u);
  EXPECT_THAT(r.report_json, ::testing::HasSubstr("\"check_id\": \"launch-bound\""));
  EXPECT_THAT(r.report_json, ::testing::HasSubstr("sampling windows"));
}

// A program that subscribed to CUPTI before its first CUDA call holds CUPTI when cuInit loads the recorder: the trace
// names that subscriber, cupti-busy reports it, and the program runs to its end.
TEST_F(RecorderGpuTest, AnotherCuptiSubscriberIsNamedAndTheProgramRunsOn) {
  Recorded r = RunUnderGraphcheck("cupti-client", absl::StrCat(BuildDir(), "/tests/gpu/gpu_cupti_client"));
  ASSERT_EQ(r.traces.size(), 1u);
  const Trace& t = r.Main();
  EXPECT_FALSE(t.recorder.subscribed) << t.recorder.message;
  // CUDA 13's CUPTI reports it as "CUPTI for planted-profiler" (seen on an H200).
  EXPECT_THAT(t.recorder.other_subscriber, ::testing::HasSubstr("planted-profiler"));
  EXPECT_THAT(r.report_json, ::testing::HasSubstr("\"check_id\": \"cupti-busy\""));
  EXPECT_THAT(r.report_json, ::testing::HasSubstr("planted-profiler"));
  EXPECT_THAT(r.report_json, ::testing::HasSubstr("exited with status 0"));
}

// --capture-only: eager launches and GPU timings are not recorded, the capture and its failure are.
TEST_F(RecorderGpuTest, CppCaptureOnlyModeKeepsTheCaptureAndSkipsEagerLaunches) {
  Recorded eager = RunCpp("eager-loop", "--capture-only");
  ASSERT_EQ(eager.traces.size(), 1u);
  EXPECT_TRUE(Calls(eager.Main(), ApiKind::kKernelLaunch).empty());
  EXPECT_TRUE(eager.Main().kernels.empty());
  EXPECT_EQ(Calls(eager.Main(), ApiKind::kStreamSynchronize).size(), 1u);

  Recorded failing = RunCpp("sync-in-capture", "--capture-only");
  const Trace& t = failing.Main();
  SCOPED_TRACE(Describe(t));
  auto launches = Calls(t, ApiKind::kKernelLaunch);
  ASSERT_EQ(launches.size(), 2u);  // the two captured launches
  for (const ApiCall* launch : launches) EXPECT_EQ(launch->capture_status, CaptureStatus::kActive);
  auto syncs = Calls(t, ApiKind::kStreamSynchronize);
  ASSERT_FALSE(syncs.empty());
  EXPECT_EQ(syncs.front()->return_code, kCaptureUnsupported);
  EXPECT_THAT(failing.report_json, ::testing::HasSubstr("\"check_id\": \"sync-in-capture\""));
}

TEST_F(RecorderPythonGpuTest, PythonCleanCaptureWithNvtx) {
  Recorded r = RunPython("clean");
  ASSERT_GE(r.traces.size(), 1u);
  const Trace& t = r.Main();
  ExpectCleanCapture(t, 3);
  EXPECT_TRUE(std::any_of(t.nvtx.begin(), t.nvtx.end(),
                          [&](const trace::NvtxEvent& e) { return t.String(e.message) == "capture_region"; }));
}

TEST_F(RecorderPythonGpuTest, PythonItemInCaptureNamesTheTorchOperator) {
  Recorded r = RunPython("item-in-capture");
  const Trace& t = r.Main();
  SCOPED_TRACE(Describe(t));
  const std::vector<ApiCall>& calls = CallRecords(t);
  auto failing = std::find_if(calls.begin(), calls.end(), [](const ApiCall& c) {
    return c.return_code == kCaptureUnsupported && c.capture_status != CaptureStatus::kNone;
  });
  ASSERT_NE(failing, calls.end());
  EXPECT_THAT(Frames(t, *failing), ::testing::HasSubstr("_local_scalar_dense"));
  // The finding points at the program's own line first: the lambda that calls .item() (capture_cases.py:43).
  absl::StatusOr<Report> report = ReportFromJson(r.report_json);
  ASSERT_TRUE(report.ok()) << report.status();
  auto sync = std::find_if(report->findings.begin(), report->findings.end(),
                           [](const Finding& f) { return f.check_id == "sync-in-capture"; });
  ASSERT_NE(sync, report->findings.end()) << r.report_json;
  ASSERT_FALSE(sync->where.python.empty()) << r.report_json;
  auto user =
      std::find_if(sync->where.python.begin(), sync->where.python.end(), [](const SourceFrame& f) { return f.user; });
  ASSERT_NE(user, sync->where.python.end()) << r.report_json;
  EXPECT_TRUE(absl::EndsWith(user->file, "capture_cases.py")) << user->file;
  EXPECT_EQ(user->line, 43);
}

// PyTorch refuses a pageable host-to-device copy during capture before CUDA sees it (torch 2.11): the recorder keeps
// the program's stderr, and the analysis maps PyTorch's message to pageable-memcpy.
TEST_F(RecorderPythonGpuTest, PythonPageableCopyInCapture) {
  Recorded r = RunPython("pageable-h2d");
  ASSERT_GE(r.traces.size(), 1u);
  EXPECT_EQ(Calls(r.Main(), ApiKind::kCaptureBegin).size(), 1u);
  EXPECT_THAT(r.report_json, ::testing::HasSubstr("\"check_id\": \"pageable-memcpy\""));
  EXPECT_THAT(r.report_json, ::testing::HasSubstr("unless the CPU tensor is pinned"));
}

TEST_F(RecorderPythonGpuTest, PythonUnjoinedStream) {
  Recorded r = RunPython("unjoined-stream");
  const Trace& t = r.Main();
  SCOPED_TRACE(Describe(t));
  auto ends = Calls(t, ApiKind::kCaptureEnd);
  ASSERT_FALSE(ends.empty());
  EXPECT_EQ(ends.back()->return_code, kCaptureUnjoined);
}

TEST_F(RecorderPythonGpuTest, PythonOtherThreadQuery) {
  Recorded r = RunPython("other-thread-query");
  const Trace& t = r.Main();
  SCOPED_TRACE(Describe(t));
  auto begins = Calls(t, ApiKind::kCaptureBegin);
  ASSERT_FALSE(begins.empty());
  auto queries = Calls(t, ApiKind::kEventQuery);
  EXPECT_TRUE(std::any_of(queries.begin(), queries.end(), [&](const ApiCall* q) {
    return q->thread_id != begins[0]->thread_id && q->capture_status == CaptureStatus::kActive && q->return_code != 0;
  }));
}

TEST_F(RecorderPythonGpuTest, PythonSegfaultAndOsExitKeepTheTrace) {
  for (const char* mode : {"segfault-after-capture", "os-exit"}) {
    SCOPED_TRACE(mode);
    Recorded r = RunPython(mode);
    ASSERT_GE(r.traces.size(), 1u);
    const Trace& t = r.Main();
    EXPECT_EQ(Calls(t, ApiKind::kCaptureEnd).size(), 1u);
    EXPECT_EQ(Calls(t, ApiKind::kGraphLaunch).size(), 3u);
  }
}

// A whole training program (forward, backward through cuBLAS on autograd's thread, optimizer, capture, replays, and
// library teardown at exit) runs to completion under the recorder. Regression: cuBLASLt destroys its streams at exit
// and passes cudaStreamLegacy handles, which once crashed the recorder.
TEST_F(RecorderPythonGpuTest, PythonTrainingProgramRunsToCompletion) {
  Recorded r = RunUnderGraphcheck("py-graphed-training",
                                  absl::StrCat("python3 ", SourceDir(), "/examples/programs/graphed_training.py"));
  EXPECT_THAT(r.report_json, ::testing::HasSubstr("exited with status 0"));
  ASSERT_GE(r.traces.size(), 1u);
  EXPECT_EQ(Calls(r.Main(), ApiKind::kGraphLaunch).size(), 10u);
  EXPECT_GT(r.Main().kernels.size(), 100u);
  EXPECT_TRUE(r.Main().read_warnings.empty());
}

// Issue 47: `graphcheck trace export` of the graphed training program names, on each replayed kernel, the capture-time
// launch of its graph node and the program's line in step() that launched it (the recorder takes Python stacks at
// launches inside captures; the shipped traces predate that).
TEST_F(RecorderPythonGpuTest, ExportedReplayedKernelsNameTheirCaptureLine) {
  const std::string name = "py-graphed-export";
  const std::string dir = absl::StrCat(::testing::TempDir(), "/gpu-", name, "-", getpid());  // RunUnderGraphcheck's
  Recorded r = RunUnderGraphcheck(name, absl::StrCat("python3 ", SourceDir(), "/examples/programs/graphed_training.py"),
                                  "--sampling 20000:0:0:0");
  ASSERT_GE(r.traces.size(), 1u);
  const std::string exported = dir + ".chrome.json";
  ASSERT_EQ(std::system(absl::StrCat(BuildDir(), "/graphcheck trace export ", dir, "/*.gctrace -o ", exported).c_str()),
            0);
  std::ifstream in(exported);
  const nlohmann::json doc = nlohmann::json::parse(in);
  // Kernels launched by the program's thread (forward, loss, optimizer) carry their line; the backward's, launched
  // by autograd's own thread, which runs no Python, carry the program's loss.backward() line (the probe's backward
  // events). Seen on an H200 before the backward events: 140 of 280, the program's thread's.
  size_t replayed = 0, at_line = 0;
  std::map<int64_t, size_t> by_thread;
  std::string example;
  for (const nlohmann::json& e : doc["traceEvents"]) {
    if (e.value("cat", "") != "kernel" || !e["args"].contains("graph")) continue;
    ++replayed;
    const nlohmann::json& captured = e["args"].value("captured", nlohmann::json::object());
    ++by_thread[captured.value("thread", int64_t{0})];
    const std::string python = captured.value("python", "");
    if (absl::StrContains(python, "graphed_training.py:") && absl::StrContains(python, " in step")) {
      ++at_line;
      if (example.empty()) example = absl::StrCat(e.value("name", "").substr(0, 60), " <- ", captured.dump());
    }
  }
  EXPECT_EQ(replayed, 10u * 28u);
  EXPECT_EQ(by_thread.size(), 2u) << "the program's thread and autograd's";
  EXPECT_EQ(at_line, replayed) << "every replayed kernel named at its line in step()";
  std::printf(
      "EXPORT graphed_training: %zu replayed kernels, %zu named at their capture line in step(), launched at "
      "capture by %zu threads; e.g. %s\n",
      replayed, at_line, by_thread.size(), example.c_str());
}

// A child forked after CUDA work (a DataLoader worker) gets its own trace; the parent's trace keeps its own records,
// including the replay after the fork.
TEST_F(RecorderPythonGpuTest, PythonForkedChildGetsItsOwnTrace) {
  Recorded r = RunPython("fork");
  ASSERT_EQ(r.traces.size(), 2u);
  const Trace* parent = nullptr;
  const Trace* child = nullptr;
  for (const Trace& t : r.traces) (t.api_calls.empty() ? child : parent) = &t;
  ASSERT_NE(parent, nullptr);
  ASSERT_NE(child, nullptr);
  EXPECT_EQ(child->process.parent_pid, parent->process.pid);
  EXPECT_EQ(Calls(*parent, ApiKind::kGraphLaunch).size(), 4u);
  EXPECT_TRUE(parent->read_warnings.empty());
  EXPECT_TRUE(child->read_warnings.empty());
}

// `graphcheck run -- torchrun --nproc_per_node 2 ...`: one trace per rank, each labelled with its rank and the same
// parent (the torchrun agent), and the distributed environment checked per rank.
TEST_F(RecorderPythonGpuTest, TorchrunGivesEachRankItsOwnTrace) {
  if (gpu_test::GpuCount() < 2) GTEST_SKIP() << "needs 2 GPUs (run on nvidia-h200-x2)";
  Recorded r = RunUnderGraphcheck("torchrun", absl::StrCat("torchrun --standalone --nproc_per_node 2 ", SourceDir(),
                                                           "/tests/gpu/programs/ddp_step.py"));
  std::map<int, const Trace*> by_rank;
  for (const Trace& t : r.traces) {
    if (t.process.rank >= 0 && !t.kernels.empty()) by_rank[t.process.rank] = &t;
  }
  ASSERT_EQ(by_rank.size(), 2u) << r.traces.size() << " traces";
  EXPECT_EQ(by_rank[0]->process.world_size, 2);
  EXPECT_EQ(by_rank[0]->process.parent_pid, by_rank[1]->process.parent_pid);
  EXPECT_NE(by_rank[0]->process.pid, by_rank[1]->process.pid);
  EXPECT_EQ(by_rank[0]->process.local_rank, 0);
  EXPECT_EQ(by_rank[1]->process.local_rank, 1);
  EXPECT_THAT(r.report_json, ::testing::HasSubstr("exited with status 0"));
  // The traces name their threads, so the watchdog setting is judged by what the watchdog's calls did during capture.
  EXPECT_THAT(r.report_json, ::testing::Not(::testing::HasSubstr("\"check_id\": \"env-nccl-async-error-handling\"")));
}

// Two ranks of torchrun on one GPU (gloo, so no NCCL rule against sharing a device): rank 1 captured one kernel more
// than rank 0, and the job's one report names it.
TEST_F(RecorderPythonGpuTest, TorchrunRankThatCapturedMoreIsNamed) {
  Recorded r = RunUnderGraphcheck("gloo-divergent", absl::StrCat("torchrun --standalone --nproc_per_node 2 ",
                                                                 SourceDir(), "/tests/gpu/programs/gloo_divergent.py"));
  std::set<int> ranks;
  for (const Trace& t : r.traces) {
    if (t.process.rank >= 0 && !t.api_calls.empty()) ranks.insert(t.process.rank);
  }
  EXPECT_THAT(ranks, ::testing::ElementsAre(0, 1));
  EXPECT_THAT(r.report_json, ::testing::HasSubstr("rank-divergent-capture"));
  EXPECT_THAT(r.report_json, ::testing::HasSubstr("rank 1 of 2"));
  // gloo is no NCCL job: nothing about NCCL's watchdog.
  EXPECT_THAT(r.report_json, ::testing::Not(::testing::HasSubstr("\"check_id\": \"env-nccl-async-error-handling\"")));
  std::printf("REPORT gloo-divergent: %s\n", r.report_json.substr(0, 4000).c_str());
}

}  // namespace
}  // namespace graphcheck
