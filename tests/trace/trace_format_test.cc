// Trace writer + reader round trips: every record type and field, many threads, chunk rollover, oversized records,
// compactness, and the reader's errors for files that are not traces.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/trace/trace_test_events.h"
#include "trace/internal/format.h"
#include "trace/trace_reader.h"
#include "trace/trace_writer.h"

namespace graphcheck::trace {
namespace {

using ::testing::ElementsAre;
using testing::Fields;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

std::unique_ptr<TraceWriter> NewWriter(const std::string& path, size_t chunk_bytes = 256 * 1024) {
  TraceWriter::Options options;
  options.chunk_bytes = chunk_bytes;
  absl::StatusOr<std::unique_ptr<TraceWriter>> writer = TraceWriter::Create(path, testing::SampleProcess(), options);
  EXPECT_TRUE(writer.ok()) << writer.status();
  return writer.ok() ? *std::move(writer) : nullptr;
}

Trace MustRead(const std::string& path) {
  absl::StatusOr<Trace> trace = ReadTrace(path);
  EXPECT_TRUE(trace.ok()) << trace.status();
  return trace.ok() ? *std::move(trace) : Trace();
}

TEST(TraceFormatTest, EveryRecordTypeRoundTrips) {
  const std::string path = testing::TempDir() + "/all.gctrace";
  auto writer = NewWriter(path);
  ASSERT_NE(writer, nullptr);
  const StringId api = writer->InternString("cudaLaunchKernel");
  const StringId kernel = writer->InternString("void at::native::vectorized_elementwise_kernel<4, \"x\">(int)");
  EXPECT_EQ(writer->InternString("cudaLaunchKernel"), api);
  EXPECT_EQ(writer->InternString(""), 0u);
  const BacktraceId bt = writer->AddBacktrace({api, kernel});
  EXPECT_EQ(writer->AddBacktrace({api, kernel}), bt);
  EXPECT_NE(writer->AddBacktrace({kernel}), bt);
  const StringId file = writer->InternString("/home/me/train.py");
  const StringId function = writer->InternString("train_step");
  const std::vector<PythonFrameRef> python = {{file, 42, function}, {file, 7, writer->InternString("<module>")}};
  const PythonStackId py = writer->AddPythonStack(python);
  EXPECT_EQ(writer->AddPythonStack(python), py);
  EXPECT_NE(writer->AddPythonStack({{file, 43, function}}), py);
  EXPECT_EQ(writer->AddPythonStack({}), 0u);

  ApiCallRecord full = testing::FullApiCall();
  full.name = api;
  full.kernel_name = kernel;
  full.backtrace = bt;
  full.python_stack = py;
  writer->WriteApiCall(full);
  writer->WriteApiCall(testing::LaunchCall(1, api, kernel));
  KernelRecord k = testing::KernelRun(1, kernel);
  k.graph_id = 5;
  k.graph_node_id = ~uint64_t{0};
  writer->WriteKernel(k);
  MemoryActivity m;
  m.kind = MemoryActivity::Kind::kMemset;
  m.correlation_id = 8;
  m.start_ns = 10;
  m.end_ns = 20;
  m.device = 1;
  m.stream_id = 2;
  m.graph_id = 3;
  m.bytes = 4096;
  m.direction = MemcpyDirection::kDeviceToHost;
  m.host_memory = HostMemory::kPageable;
  writer->WriteMemory(m);
  GraphLaunchActivity g{9, 30, 40, 1, 2, 3};
  writer->WriteGraphLaunch(g);
  NvtxEvent n;
  n.kind = NvtxEvent::Kind::kRangeStart;
  n.thread_id = 17;
  n.time_ns = 15;
  n.domain = writer->InternString("graphcheck");
  n.message = writer->InternString("step \"1\"\n");
  n.range_id = 44;
  n.communicator = 0x9e3779b97f4a7c15;
  writer->WriteNvtx(n);
  DeviceInfo device;
  device.index = 1;
  device.gpu = {"NVIDIA H100 80GB HBM3", 9, 0, "560.35"};
  writer->WriteDevice(device);
  Environment env;
  env.Set("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True");
  env.Set("EMPTY", "");
  env.set_gpu(device.gpu);
  writer->WriteEnvironment(env);
  RecorderStatus status{false, "nsys", "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED", LaunchRecording::kSampled};
  writer->WriteRecorderStatus(status);
  writer->WriteLaunchWindowEdge(/*open=*/true, 300);  // the last window never closes (the process died in it)
  writer->WriteLaunchWindowEdge(/*open=*/false, 50);  // a close with no open: skipped
  writer->WriteLaunchWindowEdge(/*open=*/true, 100);
  writer->WriteLaunchWindowEdge(/*open=*/false, 200);
  ProbeEvent probe;
  probe.kind = ProbeEventKind::kCaptureException;
  probe.origin = ProbeOrigin::kCudagraphTrees;
  probe.thread_id = 4242;
  probe.time_ns = 1'700'000'000'000'000'000ull;
  probe.graph = 0x7f0012345678;
  probe.pool = (uint64_t{1} << 32) | 3;
  probe.value = 12;
  probe.type = writer->InternString("RuntimeError");
  probe.text = writer->InternString("Cannot copy between CPU and CUDA tensors during CUDA graph capture");
  probe.stack = py;
  probe.value_now = 0x7f00deadbeef;
  writer->WriteProbeEvent(probe);
  ShadowComparison shadow;
  shadow.thread_id = 4242;
  shadow.time_ns = 1'700'000'000'000'000'001ull;
  shadow.module = 0x7f0012340000;
  shadow.module_type = writer->InternString("Bottleneck");
  shadow.call = 2;
  shadow.name = writer->InternString("output 0");
  shadow.dtype = writer->InternString("float32");
  shadow.precision = writer->InternString("tf32");
  shadow.stack = py;
  shadow.numel = 1 << 20;
  shadow.max_abs_error = 1e-300;  // doubles are stored exactly
  shadow.worst_index = 12345;
  shadow.eager_at_worst = -0.0;
  shadow.graphed_at_worst = std::numeric_limits<double>::infinity();
  shadow.eager_abs_max = 3.5;
  shadow.eager_spread = -1;
  shadow.eager_nonfinite = 1;
  shadow.graphed_nonfinite = 2;
  shadow.random = true;
  shadow.shadow_ns = 987654;
  writer->WriteShadowComparison(shadow);
  Hang hang;
  hang.thread_id = 4243;
  hang.time_ns = 1'700'000'031'000'000'000ull;
  hang.since_ns = 1'700'000'000'000'000'000ull;
  hang.timeout_ns = 30'000'000'000ull;
  hang.call = writer->InternString("cudaStreamSynchronize");
  hang.stream_id = 13;
  hang.last_graph_id = 12;
  hang.stack = py;
  writer->WriteHang(hang);
  const ThreadName watchdog{4244, writer->InternString("pt_nccl_watchdg")};
  writer->WriteThreadName(watchdog);
  const AllocatorEvent freed{AllocatorEvent::Action::kFree, 1, 1'700'000'000'000'000'500ull, 0x7f5500000000, 4000};
  const AllocatorEvent allocated{AllocatorEvent::Action::kAlloc, 0, 1'700'000'000'000'000'400ull, 0x7f5500200000,
                                 uint64_t{3} << 30};
  writer->WriteAllocation(freed);  // written out of order: the reader sorts by time
  writer->WriteAllocation(allocated);
  GraphManifest manifest;
  manifest.thread_id = 4242;
  manifest.time_ns = 1'700'000'000'000'000'600ull;
  manifest.graph_id = 12;
  manifest.kernel_nodes = 40;
  manifest.copy_nodes = 2;
  manifest.set_nodes = 1;
  manifest.other_nodes = 3;
  manifest.unread_nodes = 1;
  manifest.unread_reason = writer->InternString("cuFuncGetParamInfo returned 500");
  manifest.uses_left_out = 7;
  manifest.read_ns = 81'000;
  manifest.uses = {{GraphMemoryUse::Access::kArgument, 0x7f5500000000, 0},
                   {GraphMemoryUse::Access::kCopyRead, 0x7f5500001000, 4096},
                   {GraphMemoryUse::Access::kSet, 0x7f5500001000, 512},
                   {GraphMemoryUse::Access::kCopyWrite, 0x7f6600000000, 4096}};
  writer->WriteGraphManifest(manifest);
  EXPECT_EQ(writer->records_dropped(), 0u);

  const Trace trace = MustRead(path);
  EXPECT_THAT(trace.read_warnings, IsEmpty());
  EXPECT_EQ(Fields(trace.process), Fields(testing::SampleProcess()));
  ASSERT_EQ(trace.api_calls.size(), 2u);
  EXPECT_EQ(Fields(trace.Record(trace.api_calls[0])), Fields(full));  // sorted by start: 5000 < 1.7e18
  EXPECT_EQ(Fields(trace.Record(trace.api_calls[1])), Fields(testing::LaunchCall(1, api, kernel)));
  ASSERT_EQ(trace.kernels.size(), 1u);
  EXPECT_EQ(Fields(trace.Record(trace.kernels[0])), Fields(k));
  ASSERT_EQ(trace.memory.size(), 1u);
  EXPECT_EQ(Fields(trace.memory[0]), Fields(m));
  ASSERT_EQ(trace.graph_launches.size(), 1u);
  EXPECT_EQ(Fields(trace.graph_launches[0]), Fields(g));
  ASSERT_EQ(trace.nvtx.size(), 1u);
  EXPECT_EQ(Fields(trace.nvtx[0]), Fields(n));
  EXPECT_EQ(trace.String(n.message), "step \"1\"\n");
  EXPECT_EQ(trace.String(trace.Detail(trace.api_calls[0]).kernel_name),
            "void at::native::vectorized_elementwise_kernel<4, \"x\">(int)");
  ASSERT_NE(trace.FindBacktrace(bt), nullptr);
  EXPECT_THAT(trace.FindBacktrace(bt)->frames, ElementsAre(api, kernel));
  ASSERT_NE(trace.FindPythonStack(py), nullptr);
  EXPECT_EQ(trace.FindPythonStack(py)->frames, python);
  EXPECT_EQ(trace.String(trace.FindPythonStack(py)->frames[0].file), "/home/me/train.py");
  ASSERT_EQ(trace.probe_events.size(), 1u);
  EXPECT_EQ(Fields(trace.probe_events[0]), Fields(probe));
  ASSERT_EQ(trace.shadow_comparisons.size(), 1u);
  EXPECT_EQ(Fields(trace.shadow_comparisons[0]), Fields(shadow));
  EXPECT_TRUE(std::signbit(trace.shadow_comparisons[0].eager_at_worst));
  ASSERT_EQ(trace.hangs.size(), 1u);
  EXPECT_EQ(Fields(trace.hangs[0]), Fields(hang));
  ASSERT_EQ(trace.allocations.size(), 2u);
  EXPECT_EQ(trace.allocations[0].action, AllocatorEvent::Action::kAlloc);
  EXPECT_EQ(trace.allocations[0].time_ns, allocated.time_ns);
  EXPECT_EQ(trace.allocations[0].bytes, allocated.bytes);
  EXPECT_EQ(trace.allocations[0].address, allocated.address);
  EXPECT_EQ(trace.allocations[1].action, AllocatorEvent::Action::kFree);
  EXPECT_EQ(trace.allocations[1].device, 1u);
  EXPECT_EQ(trace.allocations[1].time_ns, freed.time_ns);
  ASSERT_EQ(trace.graph_manifests.size(), 1u);
  const GraphManifest& read = trace.graph_manifests[0];
  EXPECT_EQ(std::tie(read.thread_id, read.time_ns, read.graph_id, read.kernel_nodes, read.copy_nodes, read.set_nodes,
                     read.other_nodes, read.unread_nodes, read.uses_left_out, read.read_ns),
            std::tie(manifest.thread_id, manifest.time_ns, manifest.graph_id, manifest.kernel_nodes,
                     manifest.copy_nodes, manifest.set_nodes, manifest.other_nodes, manifest.unread_nodes,
                     manifest.uses_left_out, manifest.read_ns));
  EXPECT_EQ(trace.String(read.unread_reason), "cuFuncGetParamInfo returned 500");
  EXPECT_EQ(read.uses, manifest.uses);
  EXPECT_FALSE(read.Audited());
  ASSERT_EQ(trace.thread_names.size(), 1u);
  EXPECT_EQ(trace.thread_names[0].thread_id, 4244u);
  EXPECT_EQ(trace.ThreadNameOf(4244), "pt_nccl_watchdg");
  EXPECT_EQ(trace.ThreadNameOf(4242), "");
  ASSERT_EQ(trace.devices.size(), 1u);
  EXPECT_EQ(trace.devices[0].index, 1u);
  EXPECT_EQ(trace.devices[0].gpu, device.gpu);
  EXPECT_EQ(trace.environment.variables(), env.variables());
  EXPECT_EQ(trace.environment.gpu(), env.gpu());
  EXPECT_FALSE(trace.recorder.subscribed);
  EXPECT_EQ(trace.recorder.other_subscriber, "nsys");
  EXPECT_EQ(trace.recorder.message, status.message);
  EXPECT_EQ(trace.recorder.launches, LaunchRecording::kSampled);
  ASSERT_EQ(trace.launch_windows.size(), 2u);
  EXPECT_EQ(trace.launch_windows[0].start_ns, 100u);
  EXPECT_EQ(trace.launch_windows[0].end_ns, 200u);
  EXPECT_EQ(trace.launch_windows[1].start_ns, 300u);
  EXPECT_EQ(trace.launch_windows[1].end_ns, ~uint64_t{0});
  EXPECT_TRUE(trace.LaunchesRecorded(120, 180));
  EXPECT_FALSE(trace.LaunchesRecorded(150, 250));  // runs past the window's end
  EXPECT_FALSE(trace.LaunchesRecorded(210, 220));  // between windows
  EXPECT_TRUE(trace.LaunchesRecorded(400, 500));
}

TEST(TraceFormatTest, ProbeEventsOfOneDotThreeHaveNoValueNow) {
  ProbeEvent event;
  event.kind = ProbeEventKind::kStateRebound;
  event.value = 0x1000;
  event.value_now = 0x2000;
  uint8_t bytes[128];
  internal::Encoder encoder(bytes);
  internal::EncodeProbeEvent(encoder, event);
  ProbeEvent back;
  ASSERT_TRUE(internal::DecodeProbeEvent(absl::string_view(reinterpret_cast<char*>(bytes), encoder.size()),
                                         /*lenient=*/false, &back));
  EXPECT_EQ(Fields(back), Fields(event));
  // A 1.3 writer stopped before value_now (2 bytes here: 0x2000 as a varint): the record still decodes, with 0.
  ProbeEvent old;
  ASSERT_TRUE(internal::DecodeProbeEvent(absl::string_view(reinterpret_cast<char*>(bytes), encoder.size() - 2),
                                         /*lenient=*/false, &old));
  EXPECT_EQ(old.value, 0x1000u);
  EXPECT_EQ(old.value_now, 0u);
}

TEST(TraceFormatTest, LaunchRecordingOverlapsAnyPartOfAWindow) {
  Trace trace;
  EXPECT_TRUE(trace.LaunchRecordingOverlaps(1, 2));  // kAll
  trace.recorder.launches = LaunchRecording::kCaptureOnly;
  EXPECT_FALSE(trace.LaunchRecordingOverlaps(1, 2));
  trace.recorder.launches = LaunchRecording::kSampled;
  trace.launch_windows = {{100, 200}, {300, 400}};
  EXPECT_FALSE(trace.LaunchRecordingOverlaps(10, 100));   // ends as the first window opens
  EXPECT_TRUE(trace.LaunchRecordingOverlaps(150, 160));   // inside
  EXPECT_TRUE(trace.LaunchRecordingOverlaps(190, 250));   // runs out of the first
  EXPECT_FALSE(trace.LaunchRecordingOverlaps(200, 300));  // between, touching both edges
  EXPECT_TRUE(trace.LaunchRecordingOverlaps(250, 310));   // runs into the second
  EXPECT_TRUE(trace.LaunchRecordingOverlaps(50, 500));    // spans both
  EXPECT_FALSE(trace.LaunchRecordingOverlaps(400, 500));  // after
}

TEST(TraceFormatTest, LaunchesRecordedFollowsTheRecordingMode) {
  Trace trace;
  EXPECT_TRUE(trace.LaunchesRecorded(1, 2));  // kAll, and every trace of format 1.0
  trace.recorder.launches = LaunchRecording::kCaptureOnly;
  EXPECT_FALSE(trace.LaunchesRecorded(1, 2));
  trace.recorder.launches = LaunchRecording::kSampled;
  EXPECT_FALSE(trace.LaunchesRecorded(1, 2));  // no windows
}

TEST(TraceFormatTest, LaunchRecordsAreCompact) {
  const std::string path = testing::TempDir() + "/compact.gctrace";
  auto writer = NewWriter(path);
  ASSERT_NE(writer, nullptr);
  const StringId api = writer->InternString("cudaLaunchKernel");
  const StringId kernel = writer->InternString("kernel");
  const uint64_t before = writer->bytes_written();
  constexpr int kN = 10000;
  for (int i = 0; i < kN; ++i) writer->WriteApiCall(testing::LaunchCall(i, api, kernel));
  const double api_bytes = static_cast<double>(writer->bytes_written() - before) / kN;
  for (int i = 0; i < kN; ++i) writer->WriteKernel(testing::KernelRun(i, kernel));
  const double kernel_bytes = static_cast<double>(writer->bytes_written() - before) / kN - api_bytes;
  EXPECT_LE(api_bytes, 30.0);
  EXPECT_LE(kernel_bytes, 24.0);
  std::printf("bytes per ApiCall (launch): %.1f, per KernelActivity: %.1f\n", api_bytes, kernel_bytes);
  TraceFileStats stats;
  absl::StatusOr<Trace> trace = ReadTrace(path, &stats);
  ASSERT_TRUE(trace.ok());
  EXPECT_EQ(trace->api_calls.size(), static_cast<size_t>(kN));
  EXPECT_EQ(stats.records[4], static_cast<uint64_t>(kN));
}

TEST(TraceFormatTest, ManyThreadsEachKeepTheirOrderAcrossChunks) {
  const std::string path = testing::TempDir() + "/threads.gctrace";
  auto writer = NewWriter(path, 4096);  // one page: every thread rolls over to new chunks many times
  ASSERT_NE(writer, nullptr);
  constexpr int kThreads = 4, kPerThread = 5000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const StringId api = writer->InternString("cudaLaunchKernel");
      for (int i = 0; i < kPerThread; ++i) {
        // Each thread interns names shared with the others and its own, concurrently.
        const StringId kernel = writer->InternString("kernel_" + std::to_string(i % 50 + (i % 2) * 1000 * t));
        ApiCallRecord c = testing::LaunchCall(i, api, kernel);
        c.thread_id = static_cast<uint32_t>(t + 1);
        c.correlation_id = static_cast<uint64_t>(t) * 1'000'000 + i;
        writer->WriteApiCall(c);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(writer->records_dropped(), 0u);

  const Trace trace = MustRead(path);
  EXPECT_THAT(trace.read_warnings, IsEmpty());
  ASSERT_EQ(trace.api_calls.size(), static_cast<size_t>(kThreads * kPerThread));
  std::vector<uint64_t> next(kThreads, 0);
  std::set<std::string> names;
  for (const ApiCall& c : trace.api_calls) {
    const int t = static_cast<int>(c.thread_id) - 1;
    ASSERT_GE(t, 0);
    ASSERT_LT(t, kThreads);
    // Same start times across threads: the stable sort keeps each thread's order.
    EXPECT_EQ(c.correlation_id, static_cast<uint64_t>(t) * 1'000'000 + next[t]++);
    EXPECT_EQ(trace.String(trace.Detail(c).name), "cudaLaunchKernel");
    names.insert(std::string(trace.String(trace.Detail(c).kernel_name)));
  }
  EXPECT_EQ(names.count(""), 0u);  // every id resolved
  EXPECT_EQ(names.size(), 50u + 25u * (kThreads - 1));
}

TEST(TraceFormatTest, RecordLargerThanAChunkGetsItsOwnChunk) {
  const std::string path = testing::TempDir() + "/large.gctrace";
  auto writer = NewWriter(path, 4096);
  ASSERT_NE(writer, nullptr);
  const std::string huge(20000, 'k');
  const StringId id = writer->InternString(huge);
  writer->WriteKernel(testing::KernelRun(0, id));
  const Trace trace = MustRead(path);
  EXPECT_THAT(trace.read_warnings, IsEmpty());
  ASSERT_EQ(trace.kernels.size(), 1u);
  EXPECT_EQ(trace.String(trace.Shape(trace.kernels[0]).name), huge);
}

// A 40 MB name cost 64x its size to analyze: the reader keeps kMaxStringBytes of a string, whole characters, and
// says it cut it. A string at the limit is kept whole.
TEST(TraceFormatTest, AStringPastTheLimitIsCutWithAMarker) {
  const std::string path = testing::TempDir() + "/long-string.gctrace";
  auto writer = NewWriter(path);
  ASSERT_NE(writer, nullptr);
  const std::string at_limit(kMaxStringBytes, 'a');
  // "é" (2 bytes) from offset 1: the limit falls inside one.
  const std::string past_limit = "x" + [] {
    std::string s;
    while (s.size() < 3 * kMaxStringBytes) s += "\xc3\xa9";
    return s;
  }();
  const StringId whole = writer->InternString(at_limit);
  const StringId cut = writer->InternString(past_limit);
  writer.reset();
  const Trace trace = MustRead(path);
  EXPECT_THAT(trace.read_warnings, IsEmpty());
  EXPECT_EQ(trace.String(whole), at_limit);
  const std::string kept(trace.String(cut));
  const std::string marker = absl::StrCat(" ... [cut by graphcheck: ", past_limit.size(), " bytes]");
  ASSERT_EQ(kept.size(), kMaxStringBytes - 1 + marker.size());
  EXPECT_EQ(kept.substr(0, kMaxStringBytes - 1), past_limit.substr(0, kMaxStringBytes - 1));
  EXPECT_EQ(kept.substr(kMaxStringBytes - 1), marker);
}

// Strings a record holds itself, outside the string table (the process's host and command line, the environment, a
// GPU's name and driver, the recorder's status), are cut the same way: a trace cannot make the analysis copy a long
// host name or environment value whole any more than a long kernel name.
TEST(TraceFormatTest, StringsOutsideTheStringTableAreCutToo) {
  const std::string path = testing::TempDir() + "/long-fields.gctrace";
  const std::string long_text(3 * kMaxStringBytes, 'h');
  ProcessInfo process = testing::SampleProcess();
  process.hostname = long_text;
  process.command_line = {"python3", long_text};
  absl::StatusOr<std::unique_ptr<TraceWriter>> writer = TraceWriter::Create(path, process);
  ASSERT_TRUE(writer.ok()) << writer.status();
  const GpuInfo gpu{long_text, 9, 0, long_text};
  (*writer)->WriteDevice(DeviceInfo{0, gpu});
  Environment environment;
  environment.Set("PYTORCH_" + long_text, long_text);
  environment.set_gpu(gpu);
  (*writer)->WriteEnvironment(environment);
  (*writer)->WriteRecorderStatus(RecorderStatus{false, long_text, long_text, LaunchRecording::kAll});
  writer->reset();
  const Trace trace = MustRead(path);
  EXPECT_THAT(trace.read_warnings, IsEmpty());
  const std::string marker = absl::StrCat(" ... [cut by graphcheck: ", long_text.size(), " bytes]");
  const std::string kept = long_text.substr(0, kMaxStringBytes) + marker;
  EXPECT_EQ(trace.process.hostname, kept);
  EXPECT_THAT(trace.process.command_line, ElementsAre("python3", kept));
  ASSERT_THAT(trace.devices, SizeIs(1));
  EXPECT_EQ(trace.devices[0].gpu.name, kept);
  EXPECT_EQ(trace.devices[0].gpu.driver, kept);
  ASSERT_TRUE(trace.environment.gpu().has_value());
  EXPECT_EQ(trace.environment.gpu()->name, kept);
  ASSERT_THAT(trace.environment.variables(), SizeIs(1));
  EXPECT_EQ(trace.environment.variables().begin()->first,
            absl::StrCat("PYTORCH_", long_text.substr(0, kMaxStringBytes - 8),
                         " ... [cut by graphcheck: ", long_text.size() + 8, " bytes]"));
  EXPECT_EQ(trace.environment.variables().begin()->second, kept);
  EXPECT_EQ(trace.recorder.other_subscriber, kept);
  EXPECT_EQ(trace.recorder.message, kept);
}

TEST(TraceFormatTest, ReadErrorsNameThePath) {
  const std::string dir = testing::TempDir();
  absl::StatusOr<Trace> missing = ReadTrace(dir + "/missing.gctrace");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr("missing.gctrace"));

  const std::string text = dir + "/text.gctrace";
  std::ofstream(text) << "{\"not\": \"a trace\"}";
  absl::StatusOr<Trace> not_trace = ReadTrace(text);
  EXPECT_EQ(not_trace.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(not_trace.status().message()), HasSubstr("text.gctrace"));
  EXPECT_THAT(std::string(not_trace.status().message()), HasSubstr("bad magic"));

  // A FIFO with no writer is refused at once instead of blocking the read.
  const std::string fifo = dir + "/fifo.gctrace";
  unlink(fifo.c_str());
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  absl::StatusOr<Trace> not_file = ReadTrace(fifo);
  EXPECT_EQ(not_file.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(not_file.status().message()), HasSubstr("fifo.gctrace"));
  unlink(fifo.c_str());
}

TEST(TraceFormatTest, RefusesAnotherMajorVersionButReadsANewerMinor) {
  const std::string path = testing::TempDir() + "/version.gctrace";
  auto writer = NewWriter(path);
  ASSERT_NE(writer, nullptr);
  writer->WriteKernel(testing::KernelRun(0, 0));
  const std::string bytes = testing::FileBytes(path);
  std::string newer_major = bytes;
  newer_major[8] = 2;
  absl::StatusOr<Trace> refused = ReadTraceFromBytes(newer_major);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(refused.status().message()),
              HasSubstr(absl::StrCat("version 2.", static_cast<int>(bytes[10]))));

  std::string newer_minor = bytes;
  newer_minor[10] = static_cast<char>(bytes[10] + 1);
  absl::StatusOr<Trace> read = ReadTraceFromBytes(newer_minor);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->kernels.size(), 1u);
}

// The loss table and end state round-trip through the file's first page.
TEST(TraceFormatTest, LossesAndTheEndAreWrittenInTheFirstPage) {
  const std::string path = testing::TempDir() + "/losses.gctrace";
  auto writer = NewWriter(path);
  ASSERT_NE(writer, nullptr);
  writer->WriteKernel(testing::KernelRun(0, 0));
  writer->CountLoss(LossKind::kActivityDropped, 40);
  writer->CountLoss(LossKind::kActivityDropped, 2);
  writer->CountLoss(LossKind::kCallError, 1);
  RecorderError error;
  error.call = writer->InternString("cuGraphGetNodes");
  error.code = 201;
  error.time_ns = 77;
  writer->WriteRecorderError(error);
  Trace running = MustRead(path);
  EXPECT_EQ(running.integrity.end, TraceEnd::kRunning);
  writer->MarkEnd(TraceEnd::kClean);
  const Trace trace = MustRead(path);
  EXPECT_THAT(trace.read_warnings, IsEmpty());
  EXPECT_EQ(trace.integrity.end, TraceEnd::kClean);
  EXPECT_EQ(trace.integrity.expected_bytes, trace.integrity.file_bytes);
  ASSERT_EQ(trace.integrity.losses.size(), 2u);
  EXPECT_EQ(trace.integrity.losses[0].kind, LossKind::kActivityDropped);
  EXPECT_EQ(trace.integrity.losses[0].count, 42u);
  EXPECT_GT(trace.integrity.losses[0].first_ns, 0u);
  EXPECT_GE(trace.integrity.losses[0].last_ns, trace.integrity.losses[0].first_ns);
  EXPECT_EQ(trace.integrity.losses[1].kind, LossKind::kCallError);
  ASSERT_EQ(trace.integrity.errors.size(), 1u);
  EXPECT_EQ(trace.String(trace.integrity.errors[0].call), "cuGraphGetNodes");
  EXPECT_EQ(trace.integrity.errors[0].code, 201);
  writer->MarkEnd(TraceEnd::kHung);  // the hang watch's end reads back as such
  EXPECT_EQ(MustRead(path).integrity.end, TraceEnd::kHung);
}

// A trace cut after its header reads, and says the file is shorter than its writer made it.
TEST(TraceFormatTest, ATraceCutAfterItsHeaderSaysSo) {
  const std::string path = testing::TempDir() + "/cut.gctrace";
  auto writer = NewWriter(path);
  ASSERT_NE(writer, nullptr);
  writer->WriteKernel(testing::KernelRun(0, 0));
  const std::string bytes = testing::FileBytes(path);
  for (size_t cut : {size_t{64}, size_t{4096}}) {
    absl::StatusOr<Trace> trace = ReadTraceFromBytes(bytes.substr(0, cut));
    ASSERT_TRUE(trace.ok());
    EXPECT_EQ(trace->integrity.chunks, 0u);
    ASSERT_FALSE(trace->read_warnings.empty());
    EXPECT_THAT(trace->read_warnings[0], HasSubstr("bytes before the length its writer gave it"));
  }
}

// Traces written by earlier graphcheck versions (the recorded examples are 1.0, 1.1 and 1.2) read without warnings;
// only 1.2 and later hold Python stacks.
TEST(TraceFormatTest, ReadsTheShippedOlderTraces) {
  std::set<uint16_t> minors;
  for (const char* name : {"capture_item", "eager_launch_bound", "eager_then_graphed", "graphed_training"}) {
    TraceFileStats stats;
    absl::StatusOr<Trace> trace =
        ReadTrace(std::string(GRAPHCHECK_SOURCE_DIR) + "/examples/traces/" + name + "/trace.gctrace", &stats);
    ASSERT_TRUE(trace.ok()) << trace.status();
    EXPECT_THAT(trace->read_warnings, IsEmpty()) << name;
    EXPECT_FALSE(trace->api_calls.empty()) << name;
    EXPECT_EQ(trace->python_stacks.empty(), stats.minor_version < 2) << name;
    minors.insert(stats.minor_version);
  }
  EXPECT_EQ(minors, (std::set<uint16_t>{0, 1, 2}));
}

TEST(TraceFormatTest, CreateFailsWithAStatusForAnUnwritablePath) {
  absl::StatusOr<std::unique_ptr<TraceWriter>> writer =
      TraceWriter::Create(testing::TempDir() + "/no/such/dir/t.gctrace", testing::SampleProcess());
  ASSERT_FALSE(writer.ok());
  EXPECT_THAT(std::string(writer.status().message()), HasSubstr("no/such/dir/t.gctrace"));
}

}  // namespace
}  // namespace graphcheck::trace
