// Writes small seed traces for trace_reader_fuzzer into a folder: the current format, with small chunks, holding each
// kind of record the analyzers read (an eager launch-bound loop in NVTX steps, a capture that fails with 900/901, a
// clean capture with its replays, backtraces, Python stacks and the Python probe's events). scripts/fuzz-tests.sh
// runs it before fuzzing, so the seeds follow the format as it changes.
#include <cstdio>
#include <string>

#include "trace/trace_writer.h"

namespace graphcheck::trace {
namespace {

ApiCallRecord Call(uint64_t t, ApiKind kind, StringId name, int32_t rc = 0) {
  ApiCallRecord c;
  c.start_ns = t;
  c.end_ns = t + 2'000;
  c.thread_id = 7;
  c.kind = kind;
  c.name = name;
  c.stream_id = 13;
  c.return_code = rc;
  return c;
}

ApiCallRecord Launch(uint64_t t, uint64_t correlation, StringId name, StringId kernel) {
  ApiCallRecord c = Call(t, ApiKind::kKernelLaunch, name);
  c.end_ns = t + 3'000;
  c.correlation_id = correlation;
  c.kernel_name = kernel;
  c.grid = {128, 1, 1};
  c.block = {256, 1, 1};
  return c;
}

int Write(const std::string& path, bool with_capture) {
  TraceWriter::Options options;
  options.chunk_bytes = 4096;
  ProcessInfo process;
  process.pid = 77;
  absl::StatusOr<std::unique_ptr<TraceWriter>> writer = TraceWriter::Create(path, process, options);
  if (!writer.ok()) {
    std::fprintf(stderr, "%s\n", std::string(writer.status().message()).c_str());
    return 1;
  }
  TraceWriter& w = **writer;
  const StringId launch = w.InternString("cudaLaunchKernel");
  const StringId kernel = w.InternString("void gemm<float>(float*)");
  const StringId step = w.InternString("train_step");
  const StringId file = w.InternString("train.py");
  const StringId function = w.InternString("train_step");
  const PythonStackId stack = w.AddPythonStack({{file, 42, function}});
  const BacktraceId backtrace = w.AddBacktrace({w.InternString("cudaStreamSynchronize"), w.InternString("at::item")});
  uint64_t t = 1'000'000;
  for (uint64_t s = 0; s < 4; ++s) {
    w.WriteNvtx({NvtxEvent::Kind::kPush, 7, t, 0, step, 0});
    for (uint64_t i = 0; i < 8; ++i, t += 7'000) {
      const uint64_t correlation = 1000 + s * 8 + i;
      w.WriteApiCall(Launch(t, correlation, launch, kernel));
      KernelRecord k;
      k.name = kernel;
      k.correlation_id = correlation;
      k.start_ns = t + 4'000;
      k.end_ns = t + 6'000;
      k.stream_id = 13;
      w.WriteKernel(k);
    }
    w.WriteNvtx({NvtxEvent::Kind::kPop, 7, t, 0, 0, 0});
  }
  if (with_capture) {
    // The Python probe's view of the same capture: begun by the program, left by an exception.
    ProbeEvent probe;
    probe.kind = ProbeEventKind::kCaptureBegin;
    probe.origin = ProbeOrigin::kUser;
    probe.thread_id = 7;
    probe.time_ns = t + 5'000;
    probe.graph = 0x7f00;
    probe.type = w.InternString("global");
    probe.stack = stack;
    w.WriteProbeEvent(probe);
    probe.kind = ProbeEventKind::kCaptureException;
    probe.time_ns = t + 25'000;
    probe.type = w.InternString("RuntimeError");
    probe.text = w.InternString("CUDA error: operation not permitted when stream is capturing");
    w.WriteProbeEvent(probe);
    ApiCallRecord begin = Call(t += 10'000, ApiKind::kCaptureBegin, w.InternString("cudaStreamBeginCapture"));
    begin.capture_id = 1;
    w.WriteApiCall(begin);
    ApiCallRecord sync = Call(t += 10'000, ApiKind::kStreamSynchronize, w.InternString("cudaStreamSynchronize"), 900);
    sync.capture_status = CaptureStatus::kActive;
    sync.capture_mode = CaptureMode::kGlobal;
    sync.capture_id = 1;
    sync.backtrace = backtrace;
    sync.python_stack = stack;
    w.WriteApiCall(sync);
    ApiCallRecord end = Call(t += 10'000, ApiKind::kCaptureEnd, w.InternString("cudaStreamEndCapture"), 901);
    end.capture_status = CaptureStatus::kInvalidated;
    end.capture_id = 1;
    w.WriteApiCall(end);
  } else {
    ApiCallRecord begin = Call(t += 10'000, ApiKind::kCaptureBegin, w.InternString("cudaStreamBeginCapture"));
    begin.capture_id = 2;
    w.WriteApiCall(begin);
    ApiCallRecord captured = Launch(t += 5'000, 999, launch, kernel);
    captured.capture_status = CaptureStatus::kActive;
    captured.capture_id = 2;
    w.WriteApiCall(captured);
    ApiCallRecord end = Call(t += 10'000, ApiKind::kCaptureEnd, w.InternString("cudaStreamEndCapture"));
    end.capture_id = 2;
    end.graph_id = 5;
    end.node_count = 1;
    w.WriteApiCall(end);
    for (int r = 0; r < 3; ++r) {
      ApiCallRecord replay = Call(t += 20'000, ApiKind::kGraphLaunch, w.InternString("cudaGraphLaunch"));
      replay.graph_id = 5;
      replay.correlation_id = 5000 + r;
      w.WriteApiCall(replay);
      w.WriteGraphLaunch({replay.correlation_id, t + 3'000, t + 9'000, 0, 13, 6});
    }
  }
  w.MarkEnd(TraceEnd::kClean);
  return 0;
}

}  // namespace
}  // namespace graphcheck::trace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  return graphcheck::trace::Write(dir + "/failed_capture.gctrace", true) |
         graphcheck::trace::Write(dir + "/graphed.gctrace", false);
}
