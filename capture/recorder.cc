#include "capture/recorder.h"

#include <cuda.h>
#include <cupti.h>
#include <execinfo.h>
#include <generated_nvtx_meta.h>  // NVTX callback parameter structs (cupti.h does not bring these)
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/debugging/symbolize.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "capture/activity_decoder.h"
#include "capture/backtrace.h"
#include "capture/call_decoder.h"
#include "capture/cupti_subscription.h"
#include "capture/python_stack.h"
#include "core/environment.h"
#include "core/trace/api_names.h"
#include "core/trace/trace_writer.h"

namespace graphcheck::capture {
namespace {

using trace::ApiKind;
using trace::CaptureMode;
using trace::CaptureStatus;

constexpr size_t kActivityBufferBytes = 4 << 20;
constexpr int kMaxNesting = 8;
// Python frames kept per call: deep enough to reach the user's frame under nn.Module's call machinery.
constexpr size_t kMaxPythonFrames = 64;

// Variables that change what capture does or how it fails; recorded with the trace for the environment checks.
bool MattersToCapture(absl::string_view name) {
  for (absl::string_view prefix : {"PYTORCH_", "TORCH_", "NCCL_", "CUDA_", "CUBLAS", "CUDNN", "NVTE_", "MASTER_"}) {
    if (absl::StartsWith(name, prefix)) return true;
  }
  return name == "RANK" || name == "LOCAL_RANK" || name == "WORLD_SIZE" || name == "LOCAL_WORLD_SIZE";
}

uint32_t CurrentThreadId() {
  thread_local const uint32_t tid = static_cast<uint32_t>(syscall(SYS_gettid));
  return tid;
}

int32_t IntFromEnv(const char* name) {
  int32_t value = -1;
  const char* text = std::getenv(name);
  return text != nullptr && absl::SimpleAtoi(text, &value) ? value : -1;
}

trace::ProcessInfo CurrentProcess(uint32_t parent_pid) {
  trace::ProcessInfo process;
  process.pid = static_cast<uint32_t>(getpid());
  process.parent_pid = parent_pid;
  process.rank = IntFromEnv("RANK");
  process.local_rank = IntFromEnv("LOCAL_RANK");
  process.world_size = IntFromEnv("WORLD_SIZE");
  cuptiGetTimestamp(&process.start_ns);
  char host[256] = {0};
  if (gethostname(host, sizeof(host) - 1) == 0) process.hostname = host;
  std::ifstream cmdline("/proc/self/cmdline", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(cmdline)), std::istreambuf_iterator<char>());
  for (absl::string_view arg : absl::StrSplit(all, '\0', absl::SkipEmpty())) process.command_line.emplace_back(arg);
  return process;
}

// Per-callback-id facts, computed once at start so the callback does one table lookup.
struct CallbackEntry {
  bool recorded = false;
  ApiKind kind = ApiKind::kOther;
  bool per_thread_stream = false;  // a _ptsz/_ptds variant: stream 0 means the per-thread default stream
  trace::StringId name = 0;
};

struct ActiveCapture {
  uint64_t id = 0;
  CUstream stream = nullptr;
  CaptureMode mode = CaptureMode::kUnknown;
  uint32_t thread_id = 0;
};

// What the enter callback learned, for the exit callback of the same call.
struct PendingCall {
  CUpti_CallbackId cbid = 0;
  bool runtime = false;
  bool launch = false;
  uint32_t launch_generation = 0;  // Recorder::launch_generation_ at entry (launches only)
  uint64_t start_ns = 0;
  CaptureStatus status = CaptureStatus::kNone;
  CaptureMode mode = CaptureMode::kUnknown;
  uint64_t capture_id = 0;
  uint64_t stream_id = 0;  // stream destroy: the handle is gone at exit, so its id is taken here
};

// The calls in progress on one thread, as a stack: an exit callback pops the entry its enter pushed. Launch callbacks
// are turned off and on while calls are in flight (sampling windows, capture-only mode), so an enter may never see its
// exit, and an exit may come without its enter: exits are matched by callback id, and a launch entry that a toggle
// may have orphaned is dropped when the thread's next call enters.
struct ThreadState {
  const char* recording = nullptr;  // the API the recorder is handling on this thread, for the crash note
  int runtime_depth = 0;            // runtime entries on the stack: driver calls they make are theirs
  bool busy = false;                // the recorder's own CUDA calls must not be recorded
  int depth = 0;
  PendingCall pending[kMaxNesting];

  void Push(const PendingCall& call) {
    pending[depth++] = call;
    if (call.runtime) ++runtime_depth;
  }
  PendingCall Pop() {
    const PendingCall call = pending[--depth];
    if (call.runtime) --runtime_depth;
    return call;
  }
  // A launch cannot have a recorded call inside it (its nested driver launch is skipped), so a launch still on top
  // when another call enters lost its exit to a toggle, if launch callbacks were turned off since it entered.
  void DropOrphanedLaunch(uint32_t generation) {
    while (depth > 0 && pending[depth - 1].launch && pending[depth - 1].launch_generation != generation) Pop();
  }
};

thread_local ThreadState t_state;

class Recorder {
 public:
  absl::Status Start(const RecorderOptions& options);
  void Stop();
  void OnFork();

  static void CUPTIAPI Callback(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data);
  static void CUPTIAPI BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records);
  static void CUPTIAPI BufferCompleted(CUcontext context, uint32_t stream_id, uint8_t* buffer, size_t size,
                                       size_t valid_size);

 private:
  absl::Status EnableApiCallbacks(CUpti_CallbackDomain domain, std::vector<CallbackEntry>* table);
  absl::Status EnableNvtxCallbacks();
  void OnApi(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData* data);
  void OnApiExit(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CallbackEntry& entry,
                 const CUpti_CallbackData* data, const PendingCall& pending);
  void OnNvtx(CUpti_CallbackId cbid, const CUpti_NvtxData* data);
  void OnContextCreated(const CUpti_ResourceData* data);
  // Turns the launch callbacks on while a capture is in progress or a sampling window is open, off otherwise (modes
  // other than kAll). Lock-free so that it can run inside a callback and on the sampler thread at once: whoever
  // changes the wanted state applies it and re-checks after, so the last one to apply leaves the wanted state.
  void ApplyLaunchCallbacks();
  void SetSamplingWindow(bool open);
  void RunSampler();  // the sampler thread's body (LaunchRecording::kSampled)
  void CaptureStateAtEntry(const CallbackEntry& entry, const DecodedCall& call, PendingCall* pending);
  uint64_t StreamId(CUcontext context, CUstream stream, bool per_thread);
  trace::HostMemory HostMemoryOf(const DecodedCall& call);
  bool WantsBacktrace(ApiKind kind, int32_t return_code, CaptureStatus status) const;
  // The calling thread's Python stack, interned (0 when the program is not CPython or the thread runs no Python).
  trace::PythonStackId CapturePythonStack();
  trace::StringId NvtxMessage(const nvtxEventAttributes_t* attributes);

  RecorderOptions options_;
  std::string path_;
  std::unique_ptr<trace::TraceWriter> writer_;
  std::unique_ptr<CuptiSubscription> subscription_;
  std::unique_ptr<ActivityRecording> activity_;
  std::unique_ptr<ActivityDecoder> decoder_;
  BacktraceRecorder backtraces_;
  std::unique_ptr<PythonStackReader> python_;  // null unless the program is a supported CPython
  std::vector<CallbackEntry> runtime_table_;
  std::vector<CallbackEntry> driver_table_;
  std::vector<std::pair<CUpti_CallbackDomain, CUpti_CallbackId>> launch_callbacks_;  // toggled (not kAll)
  std::atomic<bool> window_open_{false};
  // Launches outside captures, counted only while the sampler waits for the first window's quota: an atomic add on
  // every launch would cost the other modes for nothing.
  std::atomic<bool> counting_launches_{false};
  std::atomic<uint64_t> launches_recorded_{0};
  std::atomic<uint32_t> launch_generation_{0};  // bumped whenever launch callbacks are turned off

  absl::Mutex sampler_mutex_;
  bool sampler_stop_ ABSL_GUARDED_BY(sampler_mutex_) = false;
  std::thread* sampler_ = nullptr;  // left alone in a forked child, which holds a copy of a thread it does not have
  pid_t sampler_pid_ = 0;

  std::atomic<int> active_captures_{0};
  absl::Mutex mutex_;
  std::vector<ActiveCapture> captures_ ABSL_GUARDED_BY(mutex_);
  absl::flat_hash_map<CUgraphExec, uint32_t> exec_graph_ ABSL_GUARDED_BY(mutex_);  // exec -> source graph id
  absl::flat_hash_map<CUevent, uint64_t> event_streams_ ABSL_GUARDED_BY(mutex_);   // recorded during capture
  absl::flat_hash_map<uintptr_t, trace::StringId> nvtx_domains_ ABSL_GUARDED_BY(mutex_);
  absl::flat_hash_map<uintptr_t, trace::StringId> nvtx_registered_ ABSL_GUARDED_BY(mutex_);
};

Recorder& TheRecorder() {
  static Recorder* const recorder = new Recorder();  // never destroyed: callbacks may still arrive at exit
  return *recorder;
}

std::string TracePath(const std::string& dir) {
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  return absl::StrCat(dir, "/trace-", host, "-", getpid(), ".gctrace");
}

absl::Status Recorder::Start(const RecorderOptions& options) {
  options_ = options;
  if (options_.trace_dir.empty()) {
    const char* dir = std::getenv("GRAPHCHECK_TRACE_DIR");
    options_.trace_dir = dir != nullptr ? dir : ".";
  }
  if (const char* activity = std::getenv("GRAPHCHECK_ACTIVITY"); activity != nullptr && std::string(activity) == "0") {
    options_.record_activity = false;
  }
  // `graphcheck run` validated these; a hand-set bad value keeps the default.
  if (const char* launches = std::getenv("GRAPHCHECK_LAUNCHES"); launches != nullptr) {
    trace::ParseLaunchRecording(launches, &options_.launches).IgnoreError();
  }
  if (const char* sampling = std::getenv("GRAPHCHECK_SAMPLING"); sampling != nullptr) {
    trace::ParseSamplingSchedule(sampling, &options_.sampling).IgnoreError();
  }
  if (options_.launches == trace::LaunchRecording::kCaptureOnly) options_.record_activity = false;
  absl::InitializeSymbolizer("/proc/self/exe");
  python_ = PythonStackReader::Detect();
  path_ = TracePath(options_.trace_dir);
  absl::StatusOr<std::unique_ptr<trace::TraceWriter>> writer =
      trace::TraceWriter::Create(path_, CurrentProcess(static_cast<uint32_t>(getppid())));
  if (!writer.ok()) return writer.status();
  writer_ = *std::move(writer);

  Environment environment;
  const Environment process_environment = Environment::FromCurrentProcess();
  for (const auto& [name, value] : process_environment.variables()) {
    if (MattersToCapture(name)) environment.Set(name, value);
  }
  writer_->WriteEnvironment(environment);

  trace::RecorderStatus status;
  status.launches = options_.launches;
  absl::StatusOr<std::unique_ptr<CuptiSubscription>> subscription =
      CuptiSubscription::Create(&Recorder::Callback, this, &status.other_subscriber);
  if (!subscription.ok()) {
    status.subscribed = false;
    status.message = std::string(subscription.status().message());
    writer_->WriteRecorderStatus(status);
    return absl::OkStatus();  // the program runs on, unrecorded; cupti-busy reports it
  }
  subscription_ = *std::move(subscription);
  writer_->WriteRecorderStatus(status);

  for (absl::Status s : {EnableApiCallbacks(CUPTI_CB_DOMAIN_RUNTIME_API, &runtime_table_),
                         EnableApiCallbacks(CUPTI_CB_DOMAIN_DRIVER_API, &driver_table_), EnableNvtxCallbacks(),
                         subscription_->Enable(CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED)}) {
    if (!s.ok()) return s;
  }
  decoder_ = std::make_unique<ActivityDecoder>(writer_.get());
  if (options_.record_activity) {
    absl::StatusOr<std::unique_ptr<ActivityRecording>> activity = ActivityRecording::Create(
        {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET},
        &Recorder::BufferRequested, &Recorder::BufferCompleted, options_.activity_flush_period_ms);
    if (!activity.ok()) return activity.status();
    activity_ = *std::move(activity);
  }
  if (options_.launches == trace::LaunchRecording::kSampled) {
    // The first window opens now, with activity already on; the sampler thread closes it and runs the schedule.
    window_open_.store(true);
    counting_launches_.store(true);
    ApplyLaunchCallbacks();
    uint64_t now = 0;
    cuptiGetTimestamp(&now);
    writer_->WriteLaunchWindowEdge(/*open=*/true, now);
    sampler_pid_ = getpid();
    sampler_ = new std::thread([this] { RunSampler(); });
  }
  return absl::OkStatus();
}

void Recorder::RunSampler() {
  const trace::SamplingSchedule& s = options_.sampling;
  absl::MutexLock lock(&sampler_mutex_);
  // Waits `ms`; true when asked to stop.
  auto stopped_after = [&](uint32_t ms) {
    return sampler_mutex_.AwaitWithTimeout(absl::Condition(&sampler_stop_), absl::Milliseconds(ms));
  };
  // The first window lasts until the program's first launches are recorded, however long its set-up took (polled:
  // the launch callback only counts).
  constexpr uint32_t kPollMs = 20;
  while (launches_recorded_.load(std::memory_order_relaxed) < s.first_launches) {
    if (stopped_after(kPollMs)) return;
  }
  counting_launches_.store(false, std::memory_order_relaxed);
  SetSamplingWindow(false);
  if (s.period_ms == 0) return;
  while (!stopped_after(s.period_ms - s.window_ms)) {
    SetSamplingWindow(true);
    if (stopped_after(s.window_ms)) return;
    SetSamplingWindow(false);
  }
}

void Recorder::SetSamplingWindow(bool open) {
  uint64_t now = 0;
  if (open) {
    if (activity_ != nullptr) activity_->Resume();
    window_open_.store(true);
    ApplyLaunchCallbacks();
    cuptiGetTimestamp(&now);
    writer_->WriteLaunchWindowEdge(/*open=*/true, now);
  } else {
    cuptiGetTimestamp(&now);
    writer_->WriteLaunchWindowEdge(/*open=*/false, now);
    window_open_.store(false);
    ApplyLaunchCallbacks();
    if (activity_ != nullptr) activity_->Pause();
  }
}

void Recorder::ApplyLaunchCallbacks() {
  if (launch_callbacks_.empty()) return;
  bool want;
  do {
    want = window_open_.load() || active_captures_.load() > 0;
    for (const auto& [domain, cbid] : launch_callbacks_) subscription_->Enable(domain, cbid, want).IgnoreError();
    // After the callbacks are off: a launch that entered before then may never see its exit (seen on an H200), and
    // its older generation marks it as orphaned.
    if (!want) launch_generation_.fetch_add(1);
  } while (want != (window_open_.load() || active_captures_.load() > 0));
}

absl::Status Recorder::EnableApiCallbacks(CUpti_CallbackDomain domain, std::vector<CallbackEntry>* table) {
  table->assign(CallbackIdLimit(domain), CallbackEntry{});
  for (const RecordedCallback& callback : RecordedCallbacks(domain)) {
    CallbackEntry& entry = (*table)[callback.cbid];
    entry.recorded = true;
    entry.kind = callback.kind;
    entry.per_thread_stream = callback.per_thread_stream;
    entry.name = writer_->InternString(callback.name);
    if (callback.kind == ApiKind::kKernelLaunch && options_.launches != trace::LaunchRecording::kAll) {
      launch_callbacks_.emplace_back(domain, callback.cbid);  // enabled in captures and sampling windows
      continue;
    }
    if (absl::Status s = subscription_->Enable(domain, callback.cbid); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status Recorder::EnableNvtxCallbacks() {
  for (CUpti_CallbackId cbid :
       {CUPTI_CBID_NVTX_nvtxRangePushA, CUPTI_CBID_NVTX_nvtxRangePushEx, CUPTI_CBID_NVTX_nvtxRangePop,
        CUPTI_CBID_NVTX_nvtxRangeStartA, CUPTI_CBID_NVTX_nvtxRangeStartEx, CUPTI_CBID_NVTX_nvtxRangeEnd,
        CUPTI_CBID_NVTX_nvtxMarkA, CUPTI_CBID_NVTX_nvtxMarkEx, CUPTI_CBID_NVTX_nvtxDomainRangePushEx,
        CUPTI_CBID_NVTX_nvtxDomainRangePop, CUPTI_CBID_NVTX_nvtxDomainRangeStartEx, CUPTI_CBID_NVTX_nvtxDomainRangeEnd,
        CUPTI_CBID_NVTX_nvtxDomainMarkEx, CUPTI_CBID_NVTX_nvtxDomainCreateA,
        CUPTI_CBID_NVTX_nvtxDomainRegisterStringA}) {
    if (absl::Status s = subscription_->Enable(CUPTI_CB_DOMAIN_NVTX, cbid); !s.ok()) return s;
  }
  return absl::OkStatus();
}

void Recorder::Stop() {
  if (writer_ == nullptr) return;
  if (sampler_ != nullptr && sampler_pid_ == getpid()) {
    {
      absl::MutexLock lock(&sampler_mutex_);
      sampler_stop_ = true;
    }
    sampler_->join();
    delete sampler_;
    sampler_ = nullptr;
    if (window_open_.load()) {
      uint64_t now = 0;
      cuptiGetTimestamp(&now);
      writer_->WriteLaunchWindowEdge(/*open=*/false, now);
    }
  }
  activity_.reset();  // flushes pending activity buffers through BufferCompleted
  subscription_.reset();
}

void Recorder::OnFork() {
  if (writer_ == nullptr) return;
  // The writer copies every string and backtrace interned so far into the child's file, so the ids this recorder
  // caches (API names, kernel names, frames, NVTX domains) stay valid in the child.
  path_ = TracePath(options_.trace_dir);
  writer_->ReopenForChild(path_, CurrentProcess(static_cast<uint32_t>(getppid()))).IgnoreError();
}

void CUPTIAPI Recorder::Callback(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  auto* recorder = static_cast<Recorder*>(userdata);
  if (t_state.busy) return;
  t_state.busy = true;
  switch (domain) {
    case CUPTI_CB_DOMAIN_RUNTIME_API:
    case CUPTI_CB_DOMAIN_DRIVER_API:
      recorder->OnApi(domain, cbid, static_cast<const CUpti_CallbackData*>(data));
      break;
    case CUPTI_CB_DOMAIN_NVTX:
      recorder->OnNvtx(cbid, static_cast<const CUpti_NvtxData*>(data));
      break;
    case CUPTI_CB_DOMAIN_RESOURCE:
      if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED) {
        recorder->OnContextCreated(static_cast<const CUpti_ResourceData*>(data));
      }
      break;
    default:
      break;
  }
  t_state.busy = false;
}

uint64_t Recorder::StreamId(CUcontext context, CUstream stream, bool per_thread) {
  // CUDA's special handles are not pointers: cudaStreamLegacy (0x1) and cudaStreamPerThread (0x2) must reach CUPTI
  // as the null stream with the right per-thread flag (seen on an H200: cuBLASLt passes them, and CUPTI crashes on
  // the raw value).
  if (stream == reinterpret_cast<CUstream>(0x1)) {
    stream = nullptr;
    per_thread = false;
  } else if (stream == reinterpret_cast<CUstream>(0x2)) {
    stream = nullptr;
    per_thread = true;
  }
  if (context == nullptr && cuCtxGetCurrent(&context) != CUDA_SUCCESS) return 0;
  if (context == nullptr) return 0;
  uint32_t id = 0;
  if (cuptiGetStreamIdEx(context, stream, per_thread ? 1 : 0, &id) != CUPTI_SUCCESS) return 0;
  return id;
}

void Recorder::CaptureStateAtEntry(const CallbackEntry& entry, const DecodedCall& call, PendingCall* pending) {
  // Querying a legacy-stream handle while another stream captures is itself an implicit synchronization: never
  // query it; the analyzers judge legacy-stream calls by the capture windows.
  if (call.has_stream && !IsLegacyStream(call.stream)) {
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    cuuint64_t id = 0;
    if (cuStreamGetCaptureInfo(call.stream, &status, &id, nullptr, nullptr, nullptr, nullptr) == CUDA_SUCCESS) {
      pending->status = status == CU_STREAM_CAPTURE_STATUS_ACTIVE        ? CaptureStatus::kActive
                        : status == CU_STREAM_CAPTURE_STATUS_INVALIDATED ? CaptureStatus::kInvalidated
                                                                         : CaptureStatus::kNone;
      pending->capture_id = status == CU_STREAM_CAPTURE_STATUS_NONE ? 0 : id;
    }
  }
  absl::MutexLock lock(&mutex_);
  if (captures_.empty()) return;
  const ActiveCapture* capture = &captures_.back();
  for (const ActiveCapture& c : captures_) {
    if (c.id == pending->capture_id) capture = &c;
  }
  pending->mode = capture->mode;
  if (pending->status == CaptureStatus::kNone && !(call.has_stream && !IsLegacyStream(call.stream))) {
    // A call with no stream of its own (allocation, device sync, event query) while some capture is active.
    pending->status = CaptureStatus::kActive;
    pending->capture_id = capture->id;
  }
}

trace::HostMemory Recorder::HostMemoryOf(const DecodedCall& call) {
  auto memory_type = [](const void* pointer) {
    unsigned int type = 0;
    if (cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, reinterpret_cast<CUdeviceptr>(pointer)) !=
        CUDA_SUCCESS) {
      return 0u;  // unknown to CUDA: pageable host memory
    }
    return type;
  };
  const void* host = nullptr;
  switch (call.direction) {
    case trace::MemcpyDirection::kHostToDevice:
      host = call.src;
      break;
    case trace::MemcpyDirection::kDeviceToHost:
      host = call.dst;
      break;
    case trace::MemcpyDirection::kDefault:
      for (const void* p : {call.src, call.dst}) {
        const unsigned type = memory_type(p);
        if (type == 0) return trace::HostMemory::kPageable;
        if (type == CU_MEMORYTYPE_HOST) return trace::HostMemory::kPinned;
      }
      return trace::HostMemory::kNotApplicable;
    default:
      return trace::HostMemory::kNotApplicable;
  }
  const unsigned type = memory_type(host);
  return type == 0                    ? trace::HostMemory::kPageable
         : type == CU_MEMORYTYPE_HOST ? trace::HostMemory::kPinned
                                      : trace::HostMemory::kUnknown;
}

bool Recorder::WantsBacktrace(ApiKind kind, int32_t return_code, CaptureStatus status) const {
  const bool query = kind == ApiKind::kStreamQuery || kind == ApiKind::kEventQuery;
  constexpr int32_t kNotReady = 600;  // cudaErrorNotReady / CUDA_ERROR_NOT_READY: a query's normal answer
  if (return_code != 0 && !(query && return_code == kNotReady)) return true;
  if (status != CaptureStatus::kNone) return kind != ApiKind::kKernelLaunch;
  switch (kind) {
    case ApiKind::kMalloc:
    case ApiKind::kFree:
    case ApiKind::kHostAlloc:
    case ApiKind::kModuleLoad:
    case ApiKind::kCaptureBegin:
    case ApiKind::kCaptureEnd:
      return true;
    default:
      return trace::IsSynchronizing(kind);
  }
}

void Recorder::OnApi(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData* data) {
  const bool runtime = domain == CUPTI_CB_DOMAIN_RUNTIME_API;
  const std::vector<CallbackEntry>& table = runtime ? runtime_table_ : driver_table_;
  if (cbid >= table.size() || !table[cbid].recorded) return;
  const CallbackEntry& entry = table[cbid];
  ThreadState& state = t_state;
  if (data->callbackSite == CUPTI_API_ENTER) {
    const uint32_t generation = launch_generation_.load(std::memory_order_relaxed);
    state.DropOrphanedLaunch(generation);
    if (!runtime && state.runtime_depth > 0) return;
    if (state.depth >= kMaxNesting) return;
    // A launch entering inside a launch in progress is the same launch dispatched again: seen on an H200 after launch
    // callbacks were turned off and on (a cudaLaunchKernel nested in itself, within a microsecond). Its exit then
    // closes the outer entry, so the launch is recorded once.
    if (entry.kind == ApiKind::kKernelLaunch && state.depth > 0 && state.pending[state.depth - 1].launch) return;
    PendingCall pending;
    pending.cbid = cbid;
    pending.runtime = runtime;
    if (entry.kind == ApiKind::kKernelLaunch) {
      pending.launch = true;
      pending.launch_generation = generation;
    }
    cuptiGetTimestamp(&pending.start_ns);
    const bool capturing = active_captures_.load(std::memory_order_relaxed) > 0;
    if (capturing || entry.kind == ApiKind::kCaptureEnd || entry.kind == ApiKind::kStreamDestroy) {
      const DecodedCall call =
          runtime ? DecodeRuntimeCall(cbid, data->functionParams) : DecodeDriverCall(cbid, data->functionParams);
      if (capturing || entry.kind == ApiKind::kCaptureEnd) CaptureStateAtEntry(entry, call, &pending);
      if (entry.kind == ApiKind::kStreamDestroy && call.has_stream) {
        pending.stream_id = StreamId(data->context, call.stream, entry.per_thread_stream);
      }
    }
    state.Push(pending);
    return;
  }
  // An exit whose enter was not seen (callbacks turned on in between, or a driver call nested in a runtime call) does
  // not match the top of the stack.
  if (state.depth == 0 || state.pending[state.depth - 1].cbid != cbid ||
      state.pending[state.depth - 1].runtime != runtime) {
    return;
  }
  const PendingCall pending = state.Pop();
  state.recording = data->functionName;
  OnApiExit(domain, cbid, entry, data, pending);
  state.recording = nullptr;
}

void Recorder::OnApiExit(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CallbackEntry& entry,
                         const CUpti_CallbackData* data, const PendingCall& pending) {
  const bool runtime = domain == CUPTI_CB_DOMAIN_RUNTIME_API;
  const DecodedCall call =
      runtime ? DecodeRuntimeCall(cbid, data->functionParams) : DecodeDriverCall(cbid, data->functionParams);
  trace::ApiCallRecord record;
  record.correlation_id = data->correlationId;
  record.start_ns = pending.start_ns;
  cuptiGetTimestamp(&record.end_ns);
  record.thread_id = CurrentThreadId();
  record.name = entry.name;
  record.domain = runtime ? trace::ApiDomain::kRuntime : trace::ApiDomain::kDriver;
  record.kind = entry.kind;
  record.callback_id = cbid;
  record.return_code =
      data->functionReturnValue == nullptr
          ? 0
          : (runtime ? static_cast<int32_t>(*static_cast<const cudaError_t*>(data->functionReturnValue))
                     : static_cast<int32_t>(*static_cast<const CUresult*>(data->functionReturnValue)));
  record.capture_status = pending.status;
  record.capture_mode = pending.mode;
  record.capture_id = pending.capture_id;
  record.bytes = call.bytes;
  record.direction = call.direction;
  record.grid = call.grid;
  record.block = call.block;
  const bool capturing = active_captures_.load(std::memory_order_relaxed) > 0;
  if (call.has_stream) {
    record.legacy_stream = IsLegacyStream(call.stream) && !entry.per_thread_stream;
    if (entry.kind == ApiKind::kStreamDestroy) {
      record.stream_id = pending.stream_id;
    } else if (entry.kind != ApiKind::kKernelLaunch || capturing) {
      record.stream_id = StreamId(data->context, call.stream, entry.per_thread_stream);
    }
  }
  switch (entry.kind) {
    case ApiKind::kKernelLaunch:
      if (!capturing && counting_launches_.load(std::memory_order_relaxed)) {
        launches_recorded_.fetch_add(1, std::memory_order_relaxed);
      }
      if (data->symbolName != nullptr) {
        thread_local absl::flat_hash_map<const char*, trace::StringId> names;  // symbol names are stable pointers
        thread_local const trace::TraceWriter* names_writer = nullptr;
        if (names_writer != writer_.get()) {
          names.clear();
          names_writer = writer_.get();
        }
        auto [it, inserted] = names.try_emplace(data->symbolName, 0);
        if (inserted) it->second = writer_->InternString(DemangleKernelName(data->symbolName));
        record.kernel_name = it->second;
      }
      break;
    case ApiKind::kMemcpy:
    case ApiKind::kMemcpyAsync:
      record.host_memory = HostMemoryOf(call);
      break;
    case ApiKind::kCaptureBegin:
      if (record.return_code == 0 && call.has_stream) {
        CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
        cuuint64_t id = 0;
        cuStreamGetCaptureInfo(call.stream, &status, &id, nullptr, nullptr, nullptr, nullptr);
        const CaptureMode mode = call.capture_mode >= 0 && call.capture_mode <= 2
                                     ? static_cast<CaptureMode>(call.capture_mode)
                                     : CaptureMode::kUnknown;
        record.capture_status = CaptureStatus::kActive;
        record.capture_id = id;
        record.capture_mode = mode;
        bool first = false;
        {
          absl::MutexLock lock(&mutex_);
          captures_.push_back(ActiveCapture{id, call.stream, mode, record.thread_id});
          active_captures_.store(static_cast<int>(captures_.size()), std::memory_order_relaxed);
          first = captures_.size() == 1;
        }
        if (first) ApplyLaunchCallbacks();
      }
      break;
    case ApiKind::kCaptureEnd: {
      bool last = false;
      {
        absl::MutexLock lock(&mutex_);
        for (auto it = captures_.begin(); it != captures_.end(); ++it) {
          if (it->stream == call.stream) {
            record.capture_id = it->id;
            record.capture_mode = it->mode;
            captures_.erase(it);
            break;
          }
        }
        if (captures_.empty()) event_streams_.clear();
        active_captures_.store(static_cast<int>(captures_.size()), std::memory_order_relaxed);
        last = captures_.empty();
      }
      if (last) ApplyLaunchCallbacks();
      if (record.return_code == 0 && call.out_graph != nullptr && *call.out_graph != nullptr) {
        uint32_t graph_id = 0;
        cuptiGetGraphId(*call.out_graph, &graph_id);
        record.graph_id = graph_id;
        size_t nodes = 0;
        cuGraphGetNodes(*call.out_graph, nullptr, &nodes);
        record.node_count = static_cast<uint32_t>(nodes);
      }
      break;
    }
    case ApiKind::kGraphInstantiate:
      if (call.graph != nullptr) {
        uint32_t graph_id = 0;
        cuptiGetGraphId(call.graph, &graph_id);
        record.graph_id = graph_id;
        size_t nodes = 0;
        cuGraphGetNodes(call.graph, nullptr, &nodes);
        record.node_count = static_cast<uint32_t>(nodes);
        if (record.return_code == 0 && call.out_exec != nullptr) {
          absl::MutexLock lock(&mutex_);
          exec_graph_[*call.out_exec] = graph_id;
        }
      }
      break;
    case ApiKind::kGraphLaunch:
    case ApiKind::kGraphUpload:
    case ApiKind::kGraphExecDestroy: {
      absl::MutexLock lock(&mutex_);
      auto it = exec_graph_.find(call.exec);
      if (it != exec_graph_.end()) record.graph_id = it->second;
      if (entry.kind == ApiKind::kGraphExecDestroy && it != exec_graph_.end()) exec_graph_.erase(it);
      break;
    }
    case ApiKind::kGraphDestroy:
      if (call.graph != nullptr) {
        uint32_t graph_id = 0;
        cuptiGetGraphId(call.graph, &graph_id);
        record.graph_id = graph_id;
      }
      break;
    case ApiKind::kEventRecord:
      // Which stream an event was recorded on, so a later wait can name the stream it joins (fork/join tracking).
      if (capturing && call.event != nullptr) {
        absl::MutexLock lock(&mutex_);
        event_streams_[call.event] = record.stream_id;
      }
      break;
    case ApiKind::kStreamWaitEvent:
      if (capturing && call.event != nullptr) {
        absl::MutexLock lock(&mutex_);
        auto it = event_streams_.find(call.event);
        if (it != event_streams_.end()) record.other_stream_id = it->second;
      }
      // A wait on an event recorded in a capturing stream forks the waiting stream into that capture: record the
      // state after the call, so the analyzers see which streams joined which capture.
      if (capturing && call.has_stream && !IsLegacyStream(call.stream)) {
        CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
        cuuint64_t id = 0;
        if (cuStreamGetCaptureInfo(call.stream, &status, &id, nullptr, nullptr, nullptr, nullptr) == CUDA_SUCCESS &&
            status != CU_STREAM_CAPTURE_STATUS_NONE) {
          record.capture_status =
              status == CU_STREAM_CAPTURE_STATUS_ACTIVE ? CaptureStatus::kActive : CaptureStatus::kInvalidated;
          record.capture_id = id;
        }
      }
      break;
    case ApiKind::kStreamCreate:
      if (record.return_code == 0 && call.out_stream != nullptr) {
        record.other_stream_id = StreamId(data->context, *call.out_stream, false);
      }
      break;
    default:
      break;
  }
  if (WantsBacktrace(entry.kind, record.return_code, record.capture_status)) {
    record.backtrace = backtraces_.Capture(writer_.get());
    record.python_stack = CapturePythonStack();
  }
  writer_->WriteApiCall(record);
}

trace::PythonStackId Recorder::CapturePythonStack() {
  if (python_ == nullptr) return 0;
  std::vector<trace::PythonFrameRef> frames;
  for (const PythonFrame& frame : python_->Capture(kMaxPythonFrames)) {
    frames.push_back({writer_->InternString(frame.file), static_cast<uint32_t>(std::max(frame.line, 0)),
                      writer_->InternString(frame.function)});
  }
  return writer_->AddPythonStack(frames);
}

trace::StringId Recorder::NvtxMessage(const nvtxEventAttributes_t* attributes) {
  if (attributes == nullptr) return 0;
  switch (attributes->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII:
      return attributes->message.ascii != nullptr ? writer_->InternString(attributes->message.ascii) : 0;
    case NVTX_MESSAGE_TYPE_REGISTERED: {
      absl::MutexLock lock(&mutex_);
      auto it = nvtx_registered_.find(reinterpret_cast<uintptr_t>(attributes->message.registered));
      return it == nvtx_registered_.end() ? 0 : it->second;
    }
    default:
      return 0;
  }
}

void Recorder::OnNvtx(CUpti_CallbackId cbid, const CUpti_NvtxData* data) {
  trace::NvtxEvent event;
  event.thread_id = CurrentThreadId();
  cuptiGetTimestamp(&event.time_ns);
  auto domain_of = [this](nvtxDomainHandle_t domain) -> trace::StringId {
    absl::MutexLock lock(&mutex_);
    auto it = nvtx_domains_.find(reinterpret_cast<uintptr_t>(domain));
    return it == nvtx_domains_.end() ? 0 : it->second;
  };
  const void* params = data->functionParams;
  switch (cbid) {
    case CUPTI_CBID_NVTX_nvtxRangePushA:
      event.kind = trace::NvtxEvent::Kind::kPush;
      event.message = writer_->InternString(static_cast<const nvtxRangePushA_params*>(params)->message);
      break;
    case CUPTI_CBID_NVTX_nvtxRangePushEx:
      event.kind = trace::NvtxEvent::Kind::kPush;
      event.message = NvtxMessage(static_cast<const nvtxRangePushEx_params*>(params)->eventAttrib);
      break;
    case CUPTI_CBID_NVTX_nvtxRangePop:
      event.kind = trace::NvtxEvent::Kind::kPop;
      break;
    case CUPTI_CBID_NVTX_nvtxRangeStartA:
    case CUPTI_CBID_NVTX_nvtxRangeStartEx:
      event.kind = trace::NvtxEvent::Kind::kRangeStart;
      event.message = cbid == CUPTI_CBID_NVTX_nvtxRangeStartA
                          ? writer_->InternString(static_cast<const nvtxRangeStartA_params*>(params)->message)
                          : NvtxMessage(static_cast<const nvtxRangeStartEx_params*>(params)->eventAttrib);
      if (data->functionReturnValue != nullptr) {
        event.range_id = *static_cast<const nvtxRangeId_t*>(data->functionReturnValue);
      }
      break;
    case CUPTI_CBID_NVTX_nvtxRangeEnd:
      event.kind = trace::NvtxEvent::Kind::kRangeEnd;
      event.range_id = static_cast<const nvtxRangeEnd_params*>(params)->id;
      break;
    case CUPTI_CBID_NVTX_nvtxMarkA:
      event.kind = trace::NvtxEvent::Kind::kMark;
      event.message = writer_->InternString(static_cast<const nvtxMarkA_params*>(params)->message);
      break;
    case CUPTI_CBID_NVTX_nvtxMarkEx:
      event.kind = trace::NvtxEvent::Kind::kMark;
      event.message = NvtxMessage(static_cast<const nvtxMarkEx_params*>(params)->eventAttrib);
      break;
    case CUPTI_CBID_NVTX_nvtxDomainRangePushEx: {
      const auto* p = static_cast<const nvtxDomainRangePushEx_params*>(params);
      event.kind = trace::NvtxEvent::Kind::kPush;
      event.domain = domain_of(p->domain);
      event.message = NvtxMessage(p->core.eventAttrib);
      break;
    }
    case CUPTI_CBID_NVTX_nvtxDomainRangePop:
      event.kind = trace::NvtxEvent::Kind::kPop;
      event.domain = domain_of(static_cast<const nvtxDomainRangePop_params*>(params)->domain);
      break;
    case CUPTI_CBID_NVTX_nvtxDomainRangeStartEx: {
      const auto* p = static_cast<const nvtxDomainRangeStartEx_params*>(params);
      event.kind = trace::NvtxEvent::Kind::kRangeStart;
      event.domain = domain_of(p->domain);
      event.message = NvtxMessage(p->core.eventAttrib);
      if (data->functionReturnValue != nullptr) {
        event.range_id = *static_cast<const nvtxRangeId_t*>(data->functionReturnValue);
      }
      break;
    }
    case CUPTI_CBID_NVTX_nvtxDomainRangeEnd: {
      const auto* p = static_cast<const nvtxDomainRangeEnd_params*>(params);
      event.kind = trace::NvtxEvent::Kind::kRangeEnd;
      event.domain = domain_of(p->domain);
      event.range_id = p->core.id;
      break;
    }
    case CUPTI_CBID_NVTX_nvtxDomainMarkEx: {
      const auto* p = static_cast<const nvtxDomainMarkEx_params*>(params);
      event.kind = trace::NvtxEvent::Kind::kMark;
      event.domain = domain_of(p->domain);
      event.message = NvtxMessage(p->core.eventAttrib);
      break;
    }
    case CUPTI_CBID_NVTX_nvtxDomainCreateA: {
      const auto* p = static_cast<const nvtxDomainCreateA_params*>(params);
      if (data->functionReturnValue != nullptr && p->name != nullptr) {
        const auto handle = *static_cast<const nvtxDomainHandle_t*>(data->functionReturnValue);
        const trace::StringId name = writer_->InternString(p->name);
        absl::MutexLock lock(&mutex_);
        nvtx_domains_[reinterpret_cast<uintptr_t>(handle)] = name;
      }
      return;
    }
    case CUPTI_CBID_NVTX_nvtxDomainRegisterStringA: {
      const auto* p = static_cast<const nvtxDomainRegisterStringA_params*>(params);
      if (data->functionReturnValue != nullptr && p->string != nullptr) {
        const auto handle = *static_cast<const nvtxStringHandle_t*>(data->functionReturnValue);
        const trace::StringId text = writer_->InternString(p->string);
        absl::MutexLock lock(&mutex_);
        nvtx_registered_[reinterpret_cast<uintptr_t>(handle)] = text;
      }
      return;
    }
    default:
      return;
  }
  writer_->WriteNvtx(event);
}

void Recorder::OnContextCreated(const CUpti_ResourceData* data) {
  uint32_t device_index = 0;
  if (cuptiGetDeviceId(data->context, &device_index) != CUPTI_SUCCESS) return;
  CUdevice device;
  if (cuDeviceGet(&device, static_cast<int>(device_index)) != CUDA_SUCCESS) return;
  trace::DeviceInfo info;
  info.index = device_index;
  char name[256] = {0};
  cuDeviceGetName(name, sizeof(name) - 1, device);
  info.gpu.name = name;
  cuDeviceGetAttribute(&info.gpu.cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device);
  cuDeviceGetAttribute(&info.gpu.cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device);
  int driver = 0;
  if (cuDriverGetVersion(&driver) == CUDA_SUCCESS)
    info.gpu.driver = absl::StrCat(driver / 1000, ".", driver % 1000 / 10);
  writer_->WriteDevice(info);
}

void CUPTIAPI Recorder::BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kActivityBufferBytes));
  *size = *buffer != nullptr ? kActivityBufferBytes : 0;
  *max_records = 0;
}

void CUPTIAPI Recorder::BufferCompleted(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid_size) {
  Recorder& recorder = TheRecorder();
  if (recorder.decoder_ != nullptr && valid_size > 0) recorder.decoder_->DecodeBuffer(buffer, valid_size);
  std::free(buffer);
}

// Crash signals: hand CUPTI's pending activity buffers to the trace (best effort: CUPTI is not async-signal-safe,
// but the process is dying anyway), then let the previous handler or the default action run.
constexpr int kCrashSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
struct sigaction g_previous_actions[sizeof(kCrashSignals) / sizeof(int)];

void OnCrashSignal(int signal, siginfo_t* info, void* context) {
  static std::atomic<bool> flushing{false};
  if (!flushing.exchange(true)) {
    // Say where the program died: the frames tell a crash in the program from one in the recorder.
    char header[256];
    const char* recording = t_state.recording;
    const int length = snprintf(
        header, sizeof(header), "graphcheck: pid %d received signal %d%s%s; backtrace:\n", static_cast<int>(getpid()),
        signal, recording != nullptr ? " while the recorder handled " : "", recording != nullptr ? recording : "");
    (void)!write(STDERR_FILENO, header, length);
    void* frames[64];
    backtrace_symbols_fd(frames, backtrace(frames, 64), STDERR_FILENO);
    ActivityRecording::FlushAll(/*forced=*/true);
  }
  for (size_t i = 0; i < sizeof(kCrashSignals) / sizeof(int); ++i) {
    if (kCrashSignals[i] != signal) continue;
    sigaction(signal, &g_previous_actions[i], nullptr);
  }
  raise(signal);
}

void InstallCrashHandlers() {
  struct sigaction action = {};
  action.sa_sigaction = &OnCrashSignal;
  action.sa_flags = SA_SIGINFO | SA_RESETHAND;
  sigemptyset(&action.sa_mask);
  for (size_t i = 0; i < sizeof(kCrashSignals) / sizeof(int); ++i) {
    sigaction(kCrashSignals[i], &action, &g_previous_actions[i]);
  }
}

}  // namespace

absl::Status StartRecorder(const RecorderOptions& options) {
  static absl::Status status = [&] {
    absl::Status s = TheRecorder().Start(options);
    if (!s.ok()) return s;
    std::atexit([] { TheRecorder().Stop(); });
    pthread_atfork(nullptr, nullptr, [] { TheRecorder().OnFork(); });
    InstallCrashHandlers();
    return absl::OkStatus();
  }();
  return status;
}

void StopRecorder() { TheRecorder().Stop(); }

}  // namespace graphcheck::capture
