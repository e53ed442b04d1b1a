// Writes the traces of a synthetic distributed job into a folder, one per rank, the way graphcheck run records
// `torchrun` (RANK, WORLD_SIZE, LOCAL_RANK and the host in each process record): every rank runs STEPS eager steps of
// 60 kernel launches in NVTX train_step ranges, then captures one step and replays it 20 times; rank DIVERGENT (if
// given) captures one kernel more. Every rank has CUDA_LAUNCH_BLOCKING=1 set, a finding every rank shares. With
// `hang`, the captured step's first kernel is an NCCL all-reduce (its ncclAllReduce call an NVTX range of NCCL's
// domain, as NCCL records it) and, as in a job whose ranks captured different
// collectives, every other rank ends waiting in cudaStreamSynchronize after its last replay, ended by
// --hang-timeout. With `extra-replay`, the captured step holds an all-reduce (as with `hang`) and every rank replays
// it STEPS times from train.py:48, each replay followed by an eager all-reduce of the loss from train.py:60 (a ledger
// of 2 x STEPS entries), and rank DIVERGENT replays it once more after every 10th step from train.py:52, "to log a
// fresh loss"; its first 8 steps run eagerly. For bench/job_merge.sh (the 256-rank analysis), bench/ledger_scale.sh and
// tests/cli/job_end_to_end.sh.
//   make_job_traces DIR RANKS STEPS [DIVERGENT [hang|extra-replay]]
#include <algorithm>
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

  // A cudaGraphLaunch of graph 1 with its GPU span, made from train.py at `line` (0: no Python stack).
  void Replay(uint32_t line) {
    ApiCallRecord replay = Call(ApiKind::kGraphLaunch, "cudaGraphLaunch");
    replay.graph_id = 1;
    if (line != 0) replay.python_stack = StackAt(line, line == 52 ? "log_loss" : "train_step");
    w_->WriteApiCall(replay);
    w_->WriteGraphLaunch({replay.correlation_id, replay.start_ns + 3'000, replay.start_ns + 60'000, 0, kStream, 2});
    t_ += 100'000;
  }
  // An eager ncclAllReduce (NCCL's NVTX range) announced by the probe as torch.distributed.all_reduce at `line`.
  void EagerAllReduce(uint32_t line) {
    ProbeEvent wait;
    wait.kind = ProbeEventKind::kWaitBegin;
    wait.thread_id = kThread;
    wait.time_ns = t_++;
    wait.text = w_->InternString("torch.distributed.all_reduce");
    wait.stack = StackAt(line, "train_step");
    w_->WriteProbeEvent(wait);
    const StringId nccl = w_->InternString("NCCL");
    Nvtx(NvtxEvent::Kind::kPush, w_->InternString("ncclAllReduce"), nccl);
    Nvtx(NvtxEvent::Kind::kPop, 0, nccl);
    wait.kind = ProbeEventKind::kWaitEnd;
    wait.time_ns = t_++;
    wait.stack = 0;
    w_->WriteProbeEvent(wait);
  }

  uint64_t& time() { return t_; }

 private:
  TraceWriter* w_;
  StringId launch_ = 0;
  PythonStackId StackAt(uint32_t line, const char* function) {
    return w_->AddPythonStack({{w_->InternString("/job/train.py"), line, w_->InternString(function)}});
  }

  StringId kernels_[kLaunchesPerStep + 1] = {};
  uint64_t t_ = 1'000'000'000;
  uint64_t correlation_ = 0;
};

enum class Mode { kCaptureDiverges, kHang, kExtraReplay };

int WriteRank(const std::string& dir, int rank, int ranks, int steps, bool divergent, Mode mode) {
  const bool hang = mode == Mode::kHang;
  const bool nccl = mode != Mode::kCaptureDiverges;
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
  RankWriter out(&w, nccl);
  const StringId step = w.InternString("train_step");
  const bool ledger = mode == Mode::kExtraReplay;
  const int eager_steps = ledger ? std::min(steps, 8) : steps;  // the ledger's job: its replays are the steps
  for (int s = 0; s < eager_steps; ++s) {
    out.Nvtx(NvtxEvent::Kind::kPush, step);
    out.Step(false, 0, kLaunchesPerStep);
    out.Nvtx(NvtxEvent::Kind::kPop, 0);
  }
  const uint64_t capture_id = 7;
  ApiCallRecord begin = out.Call(ApiKind::kCaptureBegin, "cudaStreamBeginCapture");
  begin.capture_mode = CaptureMode::kGlobal;
  w.WriteApiCall(begin);
  const int captured = kLaunchesPerStep + (divergent && mode != Mode::kExtraReplay ? 1 : 0);
  if (nccl) {
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
  const int replays = ledger ? steps : kReplays;
  for (int r = 1; r <= replays; ++r) {
    out.Nvtx(NvtxEvent::Kind::kPush, step);
    out.Replay(ledger ? 48 : 0);
    if (ledger) out.EagerAllReduce(60);
    out.Nvtx(NvtxEvent::Kind::kPop, 0);
    if (ledger && divergent && r % 10 == 0) out.Replay(52);
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
  using graphcheck::trace::Mode;
  const std::string mode_name = argc == 6 ? argv[5] : "";
  const Mode mode = mode_name == "hang"           ? Mode::kHang
                    : mode_name == "extra-replay" ? Mode::kExtraReplay
                                                  : Mode::kCaptureDiverges;
  if (argc < 4 || argc > 6 || !absl::SimpleAtoi(argv[2], &ranks) || !absl::SimpleAtoi(argv[3], &steps) ||
      (argc >= 5 && !absl::SimpleAtoi(argv[4], &divergent)) || (argc == 6 && mode == Mode::kCaptureDiverges) ||
      ranks < 1 || steps < 0) {
    std::fprintf(stderr, "usage: %s DIR RANKS STEPS [DIVERGENT [hang|extra-replay]]\n", argv[0]);
    return 2;
  }
  for (int rank = 0; rank < ranks; ++rank) {
    if (graphcheck::trace::WriteRank(argv[1], rank, ranks, steps, rank == divergent, mode) != 0) return 1;
  }
  return 0;
}
