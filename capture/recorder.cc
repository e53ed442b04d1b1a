// The recorder's set-up and teardown, its API-call callbacks and its activity buffers. Sampling windows are in
// launch_sampler.cc, NVTX in nvtx_recorder.cc, the process snapshot in process_snapshot.cc, crash signals in
// crash_handler.cc; the shared state is capture/internal/recorder_state.h.
#include "capture/recorder.h"

#include <pthread.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "absl/debugging/symbolize.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "capture/crash_handler.h"
#include "capture/internal/recorder_state.h"
#include "capture/process_snapshot.h"
#include "trace/api_names.h"
#include "trace/python_frames.h"

namespace graphcheck::capture::internal {
namespace {

constexpr size_t kActivityBufferBytes = 4 << 20;
// Error records per process; past it failures are only counted (a driver failing every call must not fill the disk).
constexpr uint32_t kMaxErrorRecords = 256;
constexpr int kHangPollMs = 100;                  // how often the hang watch looks at the waiting threads
constexpr uint32_t kActivityFlushPeriodMs = 250;  // how often CUPTI hands over GPU activity records

// The writer's and the hang watch's clock, a plain function: 0 when CUPTI cannot read it (Recorder::Timestamp, for the
// recorder's own records, also counts the failure; here that would recurse through CallFailed).
uint64_t CuptiNow() {
  uint64_t now = 0;
  return cuptiGetTimestamp(&now) == CUPTI_SUCCESS ? now : 0;
}

}  // namespace

thread_local ThreadState t_state;

uint32_t CurrentThreadId() {
  thread_local const uint32_t tid = static_cast<uint32_t>(syscall(SYS_gettid));
  return tid;
}

Recorder& TheRecorder() {
  static Recorder* const recorder = new Recorder();  // never destroyed: callbacks may still arrive at exit
  return *recorder;
}

absl::Status Recorder::Start(const trace::RunSettings& settings) {
  settings_ = settings;
  if (settings_.trace_dir.empty()) settings_.trace_dir = ".";
  if (settings_.launches == trace::LaunchRecording::kCaptureOnly) settings_.record_activity = false;
  absl::InitializeSymbolizer("/proc/self/exe");
  python_ = PythonStackReader::Detect();
  path_ = TracePath(settings_.trace_dir);
  trace::TraceWriter::Options writer_options;
  writer_options.clock = &CuptiNow;
  absl::StatusOr<std::unique_ptr<trace::TraceWriter>> writer =
      trace::TraceWriter::Create(path_, CurrentProcess(static_cast<uint32_t>(getppid())), writer_options);
  if (!writer.ok()) return writer.status();
  writer_ = *std::move(writer);

  writer_->WriteEnvironment(CaptureEnvironment());

  trace::RecorderStatus status;
  status.launches = settings_.launches;
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
  if (settings_.record_activity) {
    absl::StatusOr<std::unique_ptr<ActivityRecording>> activity = ActivityRecording::Create(
        {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET},
        &Recorder::BufferRequested, &Recorder::BufferCompleted, kActivityFlushPeriodMs);
    if (!activity.ok()) return activity.status();
    activity_ = *std::move(activity);
  }
  if (settings_.launches == trace::LaunchRecording::kSampled) {
    // The first window opens now, with activity already on; the sampler thread closes it and runs the schedule.
    first_steps_ = std::make_unique<trace::FirstStepsCounter>(
        settings_.sampling.first_steps, settings_.step_range.empty() ? 0 : writer_->InternString(settings_.step_range));
    window_open_.store(true);
    counting_launches_.store(true);
    ApplyLaunchCallbacks();
    writer_->WriteLaunchWindowEdge(/*open=*/true, Timestamp());
    sampler_pid_ = getpid();
    sampler_ = new std::thread([this] { RunSampler(); });
  }
  if (settings_.hang_timeout > absl::ZeroDuration()) {
    // The watch runs on CUPTI's clock, in its nanoseconds.
    hang_watch_ = std::make_unique<HangWatch>(static_cast<uint64_t>(absl::ToInt64Nanoseconds(settings_.hang_timeout)),
                                              [this](const HangWatch::Wait& wait) { OnHang(wait); });
    hang_watch_pid_ = getpid();
    hang_watch_->StartWatcher(&CuptiNow, kHangPollMs);
  }
  return absl::OkStatus();
}

absl::Status Recorder::EnableApiCallbacks(CUpti_CallbackDomain domain, std::vector<CallbackEntry>* table) {
  table->assign(CallbackIdLimit(domain), CallbackEntry{});
  for (const RecordedCallback& callback : RecordedCallbacks(domain)) {
    CallbackEntry& entry = (*table)[callback.cbid];
    entry.recorded = true;
    entry.kind = callback.kind;
    entry.per_thread_stream = callback.per_thread_stream;
    entry.name = writer_->InternString(callback.name);
    if (callback.kind == ApiKind::kKernelLaunch && settings_.launches != trace::LaunchRecording::kAll) {
      launch_callbacks_.emplace_back(domain, callback.cbid);  // enabled in captures and sampling windows
      continue;
    }
    if (absl::Status s = subscription_->Enable(domain, callback.cbid); !s.ok()) return s;
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
    if (window_open_.load()) writer_->WriteLaunchWindowEdge(/*open=*/false, Timestamp());
  }
  if (activity_ != nullptr) {
    for (const absl::Status& s : activity_->Close())
      StatusFailed(s);  // flushes pending buffers through BufferCompleted
    activity_.reset();
  }
  if (subscription_ != nullptr) {
    if (absl::Status s = subscription_->Close(); !s.ok()) StatusFailed(s);
    subscription_.reset();
  }
  // Kept alive (callbacks may still arrive); a forked child's copy has no watcher of its own to stop.
  if (hang_watch_ != nullptr && hang_watch_pid_ == getpid()) hang_watch_->StopWatcher();
  writer_->MarkEnd(trace::TraceEnd::kClean);
}

void Recorder::OnFork() {
  if (writer_ == nullptr) return;
  // The writer copies every string and backtrace interned so far into the child's file, so the ids this recorder
  // caches (API names, kernel names, frames, NVTX domains) stay valid in the child.
  path_ = TracePath(settings_.trace_dir);
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
  if (context == nullptr) {
    if (const CUresult r = cuCtxGetCurrent(&context); r != CUDA_SUCCESS) {
      CallFailed("cuCtxGetCurrent", r);
      return 0;
    }
  }
  if (context == nullptr) return 0;
  uint32_t id = 0;
  if (const CUptiResult r = cuptiGetStreamIdEx(context, stream, per_thread ? 1 : 0, &id); r != CUPTI_SUCCESS) {
    CallFailed("cuptiGetStreamIdEx", r);
    return 0;
  }
  return id;
}

void Recorder::CaptureStateAtEntry(const CallbackEntry& entry, const DecodedCall& call, PendingCall* pending) {
  // Querying a legacy-stream handle while another stream captures is itself an implicit synchronization: never
  // query it; the checks judge legacy-stream calls by the capture windows.
  if (call.has_stream && !IsLegacyStream(call.stream)) {
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    cuuint64_t id = 0;
    if (const CUresult r = cuStreamGetCaptureInfo(call.stream, &status, &id, nullptr, nullptr, nullptr, nullptr);
        r != CUDA_SUCCESS) {
      CallFailed("cuStreamGetCaptureInfo", r);
    } else {
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

bool Recorder::LaunchesAnEarlierGraph(ApiKind kind, uint32_t graph_id) {
  if (kind != ApiKind::kGraphLaunch || graph_id == 0) return false;
  const bool back = graph_id < t_state.last_graph_launched;
  t_state.last_graph_launched = graph_id;
  return back;
}

void Recorder::OnApi(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData* data) {
  const bool runtime = domain == CUPTI_CB_DOMAIN_RUNTIME_API;
  const std::vector<CallbackEntry>& table = runtime ? runtime_table_ : driver_table_;
  if (cbid >= table.size() || !table[cbid].recorded) return;
  const CallbackEntry& entry = table[cbid];
  ThreadState& state = t_state;
  if (data->callbackSite == CUPTI_API_ENTER) {
    const uint32_t generation = launch_generation_.load(std::memory_order_relaxed);
    if (const int lost = state.DropOrphanedLaunch(generation); lost > 0) {
      writer_->CountLoss(trace::LossKind::kLaunchExitLost, static_cast<uint64_t>(lost));
    }
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
    pending.start_ns = Timestamp();
    const bool capturing = active_captures_.load(std::memory_order_relaxed) > 0;
    if (capturing || entry.kind == ApiKind::kCaptureEnd || entry.kind == ApiKind::kStreamDestroy) {
      const DecodedCall call =
          runtime ? DecodeRuntimeCall(cbid, data->functionParams) : DecodeDriverCall(cbid, data->functionParams);
      if (capturing || entry.kind == ApiKind::kCaptureEnd) CaptureStateAtEntry(entry, call, &pending);
      if (entry.kind == ApiKind::kStreamDestroy && call.has_stream) {
        pending.stream_id = StreamId(data->context, call.stream, entry.per_thread_stream);
      }
    }
    // A graph launch waits too once the GPU's queue is full behind a replayed collective that never completes (seen
    // on two H100s: ranks that captured different all-reduces blocked in graph.replay() until an outer timeout).
    if (hang_watch_ != nullptr && (trace::IsSynchronizing(entry.kind) || entry.kind == ApiKind::kGraphLaunch)) {
      BeginWait(entry, data, runtime, &pending);
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
  if (pending.waiting) hang_watch_->Exit();
  state.recording = data->functionName;
  OnApiExit(domain, cbid, entry, data, pending);
  state.recording = nullptr;
}

// PyTorch names its threads (pt_nccl_watchdg, pt_autograd_0): with the name, a report can say whose thread made a
// call during another thread's capture. Read at the thread's first recorded call, when its creator has named it.
void Recorder::NoteThreadName() {
  thread_local const trace::TraceWriter* named_in = nullptr;
  if (named_in == writer_.get()) return;
  named_in = writer_.get();
  char name[17] = {};  // PR_GET_NAME writes at most 16 bytes, terminator included
  if (prctl(PR_GET_NAME, name) != 0) return;
  writer_->WriteThreadName({CurrentThreadId(), writer_->InternString(name)});
}

void Recorder::OnApiExit(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CallbackEntry& entry,
                         const CUpti_CallbackData* data, const PendingCall& pending) {
  const bool runtime = domain == CUPTI_CB_DOMAIN_RUNTIME_API;
  const DecodedCall call =
      runtime ? DecodeRuntimeCall(cbid, data->functionParams) : DecodeDriverCall(cbid, data->functionParams);
  const bool capturing = active_captures_.load(std::memory_order_relaxed) > 0;
  trace::ApiCallRecord record = NewCallRecord(runtime, cbid, entry, data, pending, call, capturing);
  bool collective_launch = false;
  switch (entry.kind) {
    case ApiKind::kKernelLaunch:
      NoteKernelLaunch(data, capturing, &record);
      break;
    case ApiKind::kMemcpy:
    case ApiKind::kMemcpyAsync:
      record.host_memory = HostMemoryOf(call);
      break;
    case ApiKind::kCaptureBegin:
      NoteCaptureBegin(call, &record);
      break;
    case ApiKind::kCaptureEnd:
      NoteCaptureEnd(call, &record);
      break;
    case ApiKind::kGraphInstantiate:
    case ApiKind::kGraphLaunch:
    case ApiKind::kGraphUpload:
    case ApiKind::kGraphExecDestroy:
    case ApiKind::kGraphDestroy:
      collective_launch = NoteGraph(entry.kind, call, &record);
      break;
    case ApiKind::kEventRecord:
    case ApiKind::kStreamWaitEvent:
      if (capturing) NoteCaptureFork(entry.kind, call, &record);
      break;
    case ApiKind::kStreamCreate:
      if (record.return_code == 0 && call.out_stream != nullptr) {
        record.other_stream_id = StreamId(data->context, *call.out_stream, false);
      }
      break;
    default:
      break;
  }
  AttachStacks(entry.kind, pending, collective_launch, &record);
  writer_->WriteApiCall(record);
}

trace::ApiCallRecord Recorder::NewCallRecord(bool runtime, CUpti_CallbackId cbid, const CallbackEntry& entry,
                                             const CUpti_CallbackData* data, const PendingCall& pending,
                                             const DecodedCall& call, bool capturing) {
  trace::ApiCallRecord record;
  record.correlation_id = data->correlationId;
  record.start_ns = pending.start_ns;
  record.end_ns = Timestamp();
  record.thread_id = CurrentThreadId();
  NoteThreadName();
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
  if (call.has_stream) {
    record.legacy_stream = IsLegacyStream(call.stream) && !entry.per_thread_stream;
    if (entry.kind == ApiKind::kStreamDestroy || pending.waiting) {  // taken at entry
      record.stream_id = pending.stream_id;
    } else if (entry.kind != ApiKind::kKernelLaunch || capturing) {
      record.stream_id = StreamId(data->context, call.stream, entry.per_thread_stream);
    }
  }
  return record;
}

void Recorder::NoteKernelLaunch(const CUpti_CallbackData* data, bool capturing, trace::ApiCallRecord* record) {
  if (!capturing && counting_launches_.load(std::memory_order_relaxed)) {
    launches_recorded_.fetch_add(1, std::memory_order_relaxed);
    ++t_state.launches;
  }
  if (data->symbolName == nullptr) return;
  thread_local absl::flat_hash_map<const char*, trace::StringId> names;  // symbol names are stable pointers
  thread_local const trace::TraceWriter* names_writer = nullptr;
  if (names_writer != writer_.get()) {
    names.clear();
    names_writer = writer_.get();
  }
  auto [it, inserted] = names.try_emplace(data->symbolName, 0);
  if (inserted) it->second = writer_->InternString(DemangleKernelName(data->symbolName));
  record->kernel_name = it->second;
}

void Recorder::NoteCaptureBegin(const DecodedCall& call, trace::ApiCallRecord* record) {
  if (record->return_code != 0 || !call.has_stream) return;
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  cuuint64_t id = 0;
  if (const CUresult r = cuStreamGetCaptureInfo(call.stream, &status, &id, nullptr, nullptr, nullptr, nullptr);
      r != CUDA_SUCCESS) {
    CallFailed("cuStreamGetCaptureInfo", r);
  }
  const CaptureMode mode = call.capture_mode >= 0 && call.capture_mode <= 2
                               ? static_cast<CaptureMode>(call.capture_mode)
                               : CaptureMode::kUnknown;
  record->capture_status = CaptureStatus::kActive;
  record->capture_id = id;
  record->capture_mode = mode;
  bool first = false;
  {
    absl::MutexLock lock(&mutex_);
    captures_.push_back(
        ActiveCapture{id, call.stream, mode, record->thread_id, nccl_calls_.load(std::memory_order_relaxed)});
    active_captures_.store(static_cast<int>(captures_.size()), std::memory_order_relaxed);
    first = captures_.size() == 1;
  }
  if (first) ApplyLaunchCallbacks();
}

void Recorder::NoteCaptureEnd(const DecodedCall& call, trace::ApiCallRecord* record) {
  bool last = false;
  bool made_nccl_calls = false;
  {
    absl::MutexLock lock(&mutex_);
    for (auto it = captures_.begin(); it != captures_.end(); ++it) {
      if (it->stream == call.stream) {
        record->capture_id = it->id;
        record->capture_mode = it->mode;
        made_nccl_calls = nccl_calls_.load(std::memory_order_relaxed) != it->nccl_calls_at_begin;
        captures_.erase(it);
        break;
      }
    }
    if (captures_.empty()) event_streams_.clear();
    active_captures_.store(static_cast<int>(captures_.size()), std::memory_order_relaxed);
    last = captures_.empty();
  }
  if (last) ApplyLaunchCallbacks();
  if (record->return_code == 0 && call.out_graph != nullptr && *call.out_graph != nullptr) {
    record->graph_id = GraphId(*call.out_graph);
    record->node_count = NodeCount(*call.out_graph);
    if (made_nccl_calls) {
      absl::MutexLock lock(&mutex_);
      collective_graphs_.insert(static_cast<uint32_t>(record->graph_id));
    }
    WriteGraphManifest(*call.out_graph, *record);
  }
}

// At the capture end's exit the graph is the program's until it instantiates and destroys it (PyTorch does both right
// away), so this is the one moment to read it.
void Recorder::WriteGraphManifest(CUgraph graph, const trace::ApiCallRecord& capture_end) {
  static const GraphDriver driver = DriverGraphCalls();  // looked up at the first capture, once the driver is up
  const uint64_t start_ns = Timestamp();
  trace::GraphManifest manifest =
      ReadGraphManifest(graph, driver, [this](absl::string_view reason) { return writer_->InternString(reason); });
  manifest.thread_id = capture_end.thread_id;
  manifest.time_ns = capture_end.end_ns;
  manifest.graph_id = capture_end.graph_id;
  manifest.read_ns = Timestamp() - start_ns;
  writer_->WriteGraphManifest(manifest);
}

bool Recorder::NoteGraph(ApiKind kind, const DecodedCall& call, trace::ApiCallRecord* record) {
  if (kind == ApiKind::kGraphInstantiate) {
    if (call.graph == nullptr) return false;
    const uint32_t graph_id = GraphId(call.graph);
    record->graph_id = graph_id;
    record->node_count = NodeCount(call.graph);
    if (record->return_code == 0 && call.out_exec != nullptr) {
      absl::MutexLock lock(&mutex_);
      exec_graph_[*call.out_exec] = graph_id;
    }
  } else if (kind == ApiKind::kGraphDestroy) {
    if (call.graph != nullptr) record->graph_id = GraphId(call.graph);
  } else {  // a launch, upload or destroy of an executable graph: the graph it was instantiated from
    absl::MutexLock lock(&mutex_);
    auto it = exec_graph_.find(call.exec);
    if (it == exec_graph_.end()) return false;
    record->graph_id = it->second;
    if (kind == ApiKind::kGraphExecDestroy) exec_graph_.erase(it);
    return kind == ApiKind::kGraphLaunch && collective_graphs_.contains(static_cast<uint32_t>(record->graph_id));
  }
  return false;
}

void Recorder::NoteCaptureFork(ApiKind kind, const DecodedCall& call, trace::ApiCallRecord* record) {
  if (kind == ApiKind::kEventRecord) {
    // Which stream an event was recorded on, so a later wait can name the stream it joins (fork/join tracking).
    if (call.event != nullptr) {
      absl::MutexLock lock(&mutex_);
      event_streams_[call.event] = record->stream_id;
    }
    return;
  }
  if (call.event != nullptr) {
    absl::MutexLock lock(&mutex_);
    auto it = event_streams_.find(call.event);
    if (it != event_streams_.end()) record->other_stream_id = it->second;
  }
  // A wait on an event recorded in a capturing stream forks the waiting stream into that capture: record the state
  // after the call, so the checks see which streams joined which capture.
  if (call.has_stream && !IsLegacyStream(call.stream)) {
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    cuuint64_t id = 0;
    const CUresult r = cuStreamGetCaptureInfo(call.stream, &status, &id, nullptr, nullptr, nullptr, nullptr);
    if (r != CUDA_SUCCESS) CallFailed("cuStreamGetCaptureInfo", r);
    if (r == CUDA_SUCCESS && status != CU_STREAM_CAPTURE_STATUS_NONE) {
      record->capture_status =
          status == CU_STREAM_CAPTURE_STATUS_ACTIVE ? CaptureStatus::kActive : CaptureStatus::kInvalidated;
      record->capture_id = id;
    }
  }
}

void Recorder::AttachStacks(ApiKind kind, const PendingCall& pending, bool collective_launch,
                            trace::ApiCallRecord* record) {
  const bool wants_backtrace = WantsBacktrace(kind, record->return_code, record->capture_status);
  if (wants_backtrace) record->backtrace = backtraces_.Capture(writer_.get());
  // A kernel launched inside a capture gets the Python stack (not the backtrace, which costs more and says less): it
  // names the program's line on every replay of its node (`graphcheck trace export`). A capture launches each once.
  const bool captured_launch = kind == ApiKind::kKernelLaunch && record->capture_status != CaptureStatus::kNone;
  if (wants_backtrace || captured_launch || LaunchesAnEarlierGraph(kind, record->graph_id) || collective_launch) {
    // A bounded wait (a synchronize, or under --hang-timeout a graph launch) took the thread's Python stack as it
    // entered the call, where the thread still is.
    record->python_stack = pending.waiting ? pending.python_stack : CapturePythonStack();
  }
}

trace::PythonStackId Recorder::CapturePythonStack() {
  if (python_ == nullptr) return 0;
  // Deeper than what is kept: the program's outermost frames are kept even below a deep library stack.
  const std::vector<PythonFrame> walked = python_->Capture(kMaxPythonWalk);
  std::vector<absl::string_view> files;
  files.reserve(walked.size());
  for (const PythonFrame& frame : walked) files.push_back(frame.file);
  std::vector<trace::PythonFrameRef> frames;
  for (size_t i : trace::FramesToKeep(files, kMaxPythonFrames)) {
    const PythonFrame& frame = walked[i];
    frames.push_back({writer_->InternString(frame.file), static_cast<uint32_t>(std::max(frame.line, 0)),
                      writer_->InternString(frame.function)});
  }
  return writer_->AddPythonStack(frames);
}

void Recorder::OnContextCreated(const CUpti_ResourceData* data) {
  absl::StatusOr<trace::DeviceInfo> device = DeviceOfContext(data->context);
  if (device.ok()) {
    writer_->WriteDevice(*device);
  } else {
    StatusFailed(device.status());
  }
}

uint32_t Recorder::GraphId(CUgraph graph) {
  uint32_t id = 0;
  if (const CUptiResult r = cuptiGetGraphId(graph, &id); r != CUPTI_SUCCESS) CallFailed("cuptiGetGraphId", r);
  return id;
}

uint32_t Recorder::NodeCount(CUgraph graph) {
  size_t nodes = 0;
  if (const CUresult r = cuGraphGetNodes(graph, nullptr, &nodes); r != CUDA_SUCCESS) CallFailed("cuGraphGetNodes", r);
  return static_cast<uint32_t>(nodes);
}

void Recorder::CallFailed(const char* call, int code) {
  if (writer_ == nullptr) return;
  writer_->CountLoss(trace::LossKind::kCallError, 1);
  if (error_records_.fetch_add(1, std::memory_order_relaxed) >= kMaxErrorRecords) return;
  trace::RecorderError error;
  error.kind = trace::LossKind::kCallError;
  error.time_ns = CuptiNow();
  error.call = writer_->InternString(call);
  error.code = code;
  writer_->WriteRecorderError(error);
}

uint64_t Recorder::Timestamp() {
  uint64_t now = 0;
  if (const CUptiResult r = cuptiGetTimestamp(&now); r != CUPTI_SUCCESS) {
    CallFailed("cuptiGetTimestamp", r);
    return 0;
  }
  return now;
}

void Recorder::StatusFailed(const absl::Status& status) { CallFailed(std::string(status.message()).c_str(), 0); }

trace::TraceWriter* RecorderWriter() { return TheRecorder().writer_.get(); }

void CUPTIAPI Recorder::BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kActivityBufferBytes));
  *size = *buffer != nullptr ? kActivityBufferBytes : 0;
  *max_records = 0;
  if (*buffer == nullptr && TheRecorder().writer_ != nullptr) {
    TheRecorder().writer_->CountLoss(trace::LossKind::kActivityBufferFailed, 1);
  }
}

void CUPTIAPI Recorder::BufferCompleted(CUcontext context, uint32_t stream_id, uint8_t* buffer, size_t,
                                        size_t valid_size) {
  Recorder& recorder = TheRecorder();
  if (recorder.decoder_ != nullptr && valid_size > 0) recorder.decoder_->DecodeBuffer(buffer, valid_size);
  std::free(buffer);
  // What CUPTI could not fit in the buffers of this context and stream (CUPTI's own accounting, as Kineto reads it).
  size_t dropped = 0;
  if (const CUptiResult r = cuptiActivityGetNumDroppedRecords(context, stream_id, &dropped); r != CUPTI_SUCCESS) {
    recorder.CallFailed("cuptiActivityGetNumDroppedRecords", r);
    return;
  }
  if (dropped == 0 || recorder.writer_ == nullptr) return;
  recorder.writer_->CountLoss(trace::LossKind::kActivityDropped, dropped);
  if (recorder.error_records_.fetch_add(1, std::memory_order_relaxed) >= kMaxErrorRecords) return;
  trace::RecorderError error;
  error.kind = trace::LossKind::kActivityDropped;
  error.time_ns = CuptiNow();
  error.count = dropped;
  uint32_t context_id = 0;
  if (context != nullptr && cuptiGetContextId(context, &context_id) == CUPTI_SUCCESS) error.context_id = context_id;
  error.stream_id = stream_id;
  recorder.writer_->WriteRecorderError(error);
}

}  // namespace graphcheck::capture::internal

namespace graphcheck::capture {

using internal::TheRecorder;

absl::Status StartRecorder(const trace::RunSettings& settings) {
  static absl::Status status = [&] {
    absl::Status s = TheRecorder().Start(settings);
    if (!s.ok()) return s;
    std::atexit([] { TheRecorder().Stop(); });
    pthread_atfork(nullptr, nullptr, [] { TheRecorder().OnFork(); });
    CrashHooks hooks;
    hooks.recording_api = [] { return internal::t_state.recording; };
    // Only what is async-signal-safe: the header says the process crashed, and with which signal.
    hooks.on_crash = [](int signal) {
      if (trace::TraceWriter* writer = internal::RecorderWriter()) writer->MarkEnd(trace::TraceEnd::kCrashed, signal);
    };
    InstallCrashHandlers(hooks);
    return absl::OkStatus();
  }();
  return status;
}

}  // namespace graphcheck::capture
