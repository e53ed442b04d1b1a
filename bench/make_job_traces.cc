// Writes the traces of a synthetic distributed job into a folder, one per rank, the way graphcheck run records
// `torchrun` (RANK, WORLD_SIZE, LOCAL_RANK and the host in each process record): every rank runs STEPS eager steps of
// 60 kernel launches in NVTX train_step ranges, then captures one step and replays it 20 times; rank DIVERGENT (if
// given) captures one kernel more. Every rank has CUDA_LAUNCH_BLOCKING=1 set, a finding every rank shares. With
// `hang`, the captured step's first kernel is an NCCL all-reduce (its ncclAllReduce call an NVTX range of NCCL's
// domain, as NCCL records it) and, as in a job whose ranks captured different
// collectives, every other rank ends waiting in cudaStreamSynchronize after its last replay, ended by
// --hang-timeout. For bench/job_merge.sh (the 256-rank analysis) and tests/cli/job_end_to_end.sh.
//   make_job_traces DIR RANKS STEPS [DIVERGENT [hang]]
#include <cstdio>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "trace/trace_writer.h"

namespace graphcheck::trace {
namespace {

constexpr int kLaunchesPerStep = 60;
constexpr int kReplays = 20;
constexpr uint64_t kStream = 13;
constexpr uint32_t kThread = 4000;

class RankWriter {
 public:
  RankWriter(TraceWriter* writer, bool nccl) : w_(writer) {
    launch_ = w_->InternString("cudaLaunchKernel");
    for (int k = 0; k <= kLaunchesPerStep; ++k) {
      kernels_[k] = w_->InternString(absl::StrCat("void layer_", k % 20, "_kernel<float>(float*, int)"));
    }
    if (nccl) kernels_[0] = w_->InternString("ncclDevKernel_AllReduce_Sum_f32_RING_LL");
  }

  void Step(bool captured, uint64_t capture_id, int launches) {
    for (int k = 0; k < launches; ++k, t_ += 4'000) {
      ApiCallRecord call;
      call.correlation_id = ++correlation_;
      call.start_ns = t_;
      call.end_ns = t_ + 3'000;
      call.thread_id = kThread;
      call.name = launch_;
      call.kind = ApiKind::kKernelLaunch;
      call.stream_id = kStream;
      call.kernel_name = kernels_[k];
      call.grid = {128, 1, 1};
      call.block = {256, 1, 1};
      if (captured) {
        call.capture_status = CaptureStatus::kActive;
        call.capture_mode = CaptureMode::kGlobal;
        call.capture_id = capture_id;
      }
      w_->WriteApiCall(call);
      if (captured) continue;
      KernelRecord kernel;
      kernel.correlation_id = call.correlation_id;
      kernel.start_ns = t_ + 6'000;
      kernel.end_ns = t_ + 8'000;
      kernel.stream_id = kStream;
      kernel.name = kernels_[k];
      kernel.grid = call.grid;
      kernel.block = call.block;
      w_->WriteKernel(kernel);
    }
  }

  void Nvtx(NvtxEvent::Kind kind, StringId message, StringId domain = 0) {
    w_->WriteNvtx({kind, kThread, t_++, domain, message, 0});
  }

  ApiCallRecord Call(ApiKind kind, const char* name) {
    ApiCallRecord call;
    call.correlation_id = ++correlation_;
    call.start_ns = t_;
    call.end_ns = t_ + 2'000;
    t_ += 5'000;
    call.thread_id = kThread;
    call.name = w_->InternString(name);
    call.kind = kind;
    call.stream_id = kStream;
    return call;
  }

  uint64_t& time() { return t_; }

 private:
  TraceWriter* w_;
  StringId launch_ = 0;
  StringId kernels_[kLaunchesPerStep + 1] = {};
  uint64_t t_ = 1'000'000'000;
  uint64_t correlation_ = 0;
};

int WriteRank(const std::string& dir, int rank, int ranks, int steps, bool divergent, bool hang) {
  ProcessInfo process;
  process.pid = 10000 + rank;
  process.parent_pid = 9999;
  process.rank = rank;
  process.local_rank = rank % 8;
  process.world_size = ranks;
  process.hostname = absl::StrCat("node", rank / 8);
  process.command_line = {"python3", "train.py"};
  const std::string path = absl::StrCat(dir, "/trace-", process.hostname, "-", process.pid, ".gctrace");
  absl::StatusOr<std::unique_ptr<TraceWriter>> writer = TraceWriter::Create(path, process);
  if (!writer.ok()) {
    std::fprintf(stderr, "%s\n", std::string(writer.status().message()).c_str());
    return 1;
  }
  TraceWriter& w = **writer;
  Environment environment;
  environment.Set("CUDA_LAUNCH_BLOCKING", "1");
  w.WriteEnvironment(environment);
  RankWriter out(&w, hang);
  const StringId step = w.InternString("train_step");
  for (int s = 0; s < steps; ++s) {
    out.Nvtx(NvtxEvent::Kind::kPush, step);
    out.Step(false, 0, kLaunchesPerStep);
    out.Nvtx(NvtxEvent::Kind::kPop, 0);
  }
  const uint64_t capture_id = 7;
  ApiCallRecord begin = out.Call(ApiKind::kCaptureBegin, "cudaStreamBeginCapture");
  begin.capture_mode = CaptureMode::kGlobal;
  w.WriteApiCall(begin);
  const int captured = kLaunchesPerStep + (divergent ? 1 : 0);
  if (hang) {
    const StringId nccl = w.InternString("NCCL");
    out.Nvtx(NvtxEvent::Kind::kPush, w.InternString("ncclAllReduce"), nccl);
    out.Nvtx(NvtxEvent::Kind::kPop, 0, nccl);
  }
  out.Step(true, capture_id, captured);
  ApiCallRecord end = out.Call(ApiKind::kCaptureEnd, "cudaStreamEndCapture");
  end.capture_status = CaptureStatus::kActive;
  end.capture_id = capture_id;
  end.graph_id = 1;
  end.node_count = static_cast<uint32_t>(captured);
  w.WriteApiCall(end);
  for (int r = 0; r < kReplays; ++r) {
    out.Nvtx(NvtxEvent::Kind::kPush, step);
    ApiCallRecord replay = out.Call(ApiKind::kGraphLaunch, "cudaGraphLaunch");
    replay.graph_id = 1;
    w.WriteApiCall(replay);
    w.WriteGraphLaunch({replay.correlation_id, replay.start_ns + 3'000, replay.start_ns + 60'000, 0, kStream, 2});
    out.time() += 100'000;
    out.Nvtx(NvtxEvent::Kind::kPop, 0);
  }
  if (hang && !divergent) {
    Hang waited;
    waited.thread_id = kThread;
    waited.since_ns = out.time();
    waited.timeout_ns = 600'000'000'000;
    waited.time_ns = waited.since_ns + waited.timeout_ns;
    waited.call = w.InternString("cudaStreamSynchronize");
    waited.stream_id = kStream;
    waited.last_graph_id = 1;
    w.WriteHang(waited);
    w.MarkEnd(TraceEnd::kHung);
    return 0;
  }
  w.MarkEnd(TraceEnd::kClean);
  return 0;
}

}  // namespace
}  // namespace graphcheck::trace

int main(int argc, char** argv) {
  int ranks = 0;
  int steps = 0;
  int divergent = -1;
  const bool hang = argc == 6 && std::string(argv[5]) == "hang";
  if (argc < 4 || argc > 6 || !absl::SimpleAtoi(argv[2], &ranks) || !absl::SimpleAtoi(argv[3], &steps) ||
      (argc >= 5 && !absl::SimpleAtoi(argv[4], &divergent)) || (argc == 6 && !hang) || ranks < 1 || steps < 0) {
    std::fprintf(stderr, "usage: %s DIR RANKS STEPS [DIVERGENT [hang]]\n", argv[0]);
    return 2;
  }
  for (int rank = 0; rank < ranks; ++rank) {
    if (graphcheck::trace::WriteRank(argv[1], rank, ranks, steps, rank == divergent, hang) != 0) return 1;
  }
  return 0;
}
