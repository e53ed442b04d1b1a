// Writes a trace holding one long string, for bench/long_strings_memory.sh (peak memory of `graphcheck analyze`
// against the trace's size): an eager program of 20 NVTX "step" ranges of 10 kernel launches each, whose first
// kernel's name is MEGABYTES MB long (a templated name as a code generator can emit) and whose launches carry a
// Python stack whose function name is that same string. The string reaches the string table, the kernel and launch
// names, the Python frames, demangling and the report.
//   make_long_string_trace FILE MEGABYTES
#include <cstdio>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "trace/trace_writer.h"

namespace graphcheck::trace {
namespace {

constexpr int kSteps = 20;
constexpr int kLaunchesPerStep = 10;
constexpr uint64_t kStream = 13;
constexpr uint32_t kThread = 4000;

int Write(const std::string& path, uint64_t megabytes) {
  ProcessInfo process;
  process.pid = 4000;
  process.parent_pid = 3999;
  process.hostname = "bench";
  process.command_line = {"python3", "generated.py"};
  absl::StatusOr<std::unique_ptr<TraceWriter>> writer = TraceWriter::Create(path, process);
  if (!writer.ok()) {
    std::fprintf(stderr, "%s\n", std::string(writer.status().message()).c_str());
    return 1;
  }
  TraceWriter& w = **writer;
  const std::string long_name =
      absl::StrCat("void generated_kernel<", std::string(megabytes * 1000 * 1000, 'T'), ">(float*)");
  StringId kernels[kLaunchesPerStep];
  kernels[0] = w.InternString(long_name);
  for (int k = 1; k < kLaunchesPerStep; ++k) kernels[k] = w.InternString(absl::StrCat("void layer_", k, "(float*)"));
  const StringId launch = w.InternString("cudaLaunchKernel");
  const StringId step = w.InternString("step");
  const PythonStackId stack = w.AddPythonStack({{w.InternString("/app/generated.py"), 12, kernels[0]}});
  uint64_t t = 1'000'000'000;
  uint64_t correlation = 0;
  for (int s = 0; s < kSteps; ++s) {
    w.WriteNvtx({NvtxEvent::Kind::kPush, kThread, t++, 0, step, 0});
    for (int k = 0; k < kLaunchesPerStep; ++k, t += 4'000) {
      ApiCallRecord call;
      call.correlation_id = ++correlation;
      call.start_ns = t;
      call.end_ns = t + 3'000;
      call.thread_id = kThread;
      call.name = launch;
      call.kind = ApiKind::kKernelLaunch;
      call.stream_id = kStream;
      call.kernel_name = kernels[k];
      call.grid = {128, 1, 1};
      call.block = {256, 1, 1};
      if (k == 0) call.python_stack = stack;
      w.WriteApiCall(call);
      KernelRecord kernel;
      kernel.correlation_id = call.correlation_id;
      kernel.start_ns = t + 6'000;
      kernel.end_ns = t + 8'000;
      kernel.stream_id = kStream;
      kernel.name = kernels[k];
      kernel.grid = call.grid;
      kernel.block = call.block;
      w.WriteKernel(kernel);
    }
    w.WriteNvtx({NvtxEvent::Kind::kPop, kThread, t++, 0, 0, 0});
  }
  w.MarkEnd(TraceEnd::kClean);
  return 0;
}

}  // namespace
}  // namespace graphcheck::trace

int main(int argc, char** argv) {
  uint64_t megabytes = 0;
  if (argc != 3 || !absl::SimpleAtoi(argv[2], &megabytes) || megabytes == 0) {
    std::fprintf(stderr, "usage: make_long_string_trace FILE MEGABYTES\n");
    return 2;
  }
  return graphcheck::trace::Write(argv[1], megabytes);
}
