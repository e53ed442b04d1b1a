// The recorder's state and callbacks, shared by the files that implement them by job: recorder.cc (set-up, API
// calls, activity buffers), launch_sampler.cc (sampling windows and launch callback toggles), nvtx_recorder.cc (NVTX
// ranges and marks), probe_events.cc (the Python probe's events), hang_events.cc (--hang-timeout's waits). Internal
// to capture/.
#ifndef GRAPHCHECK_CAPTURE_INTERNAL_RECORDER_STATE_H_
#define GRAPHCHECK_CAPTURE_INTERNAL_RECORDER_STATE_H_

#include <cuda.h>
#include <cupti.h>
#include <generated_nvtx_meta.h>  // NVTX callback parameter structs (cupti.h does not bring these)
#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "capture/activity_decoder.h"
#include "capture/backtrace.h"
#include "capture/call_decoder.h"
#include "capture/cupti_subscription.h"
#include "capture/graph_manifest.h"
#include "capture/hang_watch.h"
#include "capture/probe_abi.h"
#include "capture/python_stack.h"
#include "trace/run_settings.h"
#include "trace/trace_writer.h"

namespace graphcheck::capture::internal {

using trace::ApiKind;
using trace::CaptureMode;
using trace::CaptureStatus;

inline constexpr int kMaxNesting = 8;
// Python frames kept per call or probe event: deep enough to reach the user's frame under nn.Module's call machinery.
inline constexpr size_t kMaxPythonFrames = 64;
inline constexpr size_t kMaxPythonWalk = 192;  // frames walked to choose the kept ones from

uint32_t CurrentThreadId();

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
  uint64_t nccl_calls_at_begin = 0;  // Recorder::nccl_calls_ when it began
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
  uint64_t stream_id = 0;  // stream destroy (the handle is gone at exit) and bounded waits: taken at entry
  bool waiting = false;    // a synchronizing call the hang watch bounds
  trace::PythonStackId python_stack = 0;  // a bounded wait's, taken at entry
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
  uint64_t launches = 0;             // this thread's launches while the first sampling window counts them
  uint32_t last_graph_launched = 0;  // the CUDA graph id of this thread's last cudaGraphLaunch

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
  // Returns how many were dropped (the recorder counts them as lost).
  int DropOrphanedLaunch(uint32_t generation) {
    int dropped = 0;
    while (depth > 0 && pending[depth - 1].launch && pending[depth - 1].launch_generation != generation) {
      Pop();
      ++dropped;
    }
    return dropped;
  }
};

extern thread_local ThreadState t_state;

class Recorder {
 public:
  absl::Status Start(const trace::RunSettings& settings);
  void Stop();
  void OnFork();

  // Writes an event of the Python probe (probe_events.cc); 0 when nothing is recorded (no writer, bad kind).
  int OnProbeEvent(const GraphcheckProbeEvent& event);
  // Writes an output the probe compared under --shadow (probe_events.cc); 0 when nothing is recorded.
  int OnShadowComparison(const GraphcheckShadowRecord& record);
  // Writes the caching allocator's history the probe read at exit (probe_events.cc); returns the entries written.
  int64_t OnAllocatorHistory(const GraphcheckAllocations& batch);
  // Under --hang-timeout, the probe's wait-begin and wait-end events bound a wait as a synchronizing call's are.
  void WatchProbeWait(const trace::ProbeEvent& event);

  static void CUPTIAPI Callback(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data);
  static void CUPTIAPI BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records);
  static void CUPTIAPI BufferCompleted(CUcontext context, uint32_t stream_id, uint8_t* buffer, size_t size,
                                       size_t valid_size);

 private:
  absl::Status EnableApiCallbacks(CUpti_CallbackDomain domain, std::vector<CallbackEntry>* table);
  absl::Status EnableNvtxCallbacks();
  void OnApi(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData* data);
  // A recorded call returned: its record, in named steps (the common fields, then what its kind adds, then stacks).
  void OnApiExit(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CallbackEntry& entry,
                 const CUpti_CallbackData* data, const PendingCall& pending);
  trace::ApiCallRecord NewCallRecord(bool runtime, CUpti_CallbackId cbid, const CallbackEntry& entry,
                                     const CUpti_CallbackData* data, const PendingCall& pending,
                                     const DecodedCall& call, bool capturing);
  void NoteKernelLaunch(const CUpti_CallbackData* data, bool capturing, trace::ApiCallRecord* record);
  // A capture begins or ends: the recorder's list of active captures, and the launch callbacks with it.
  void NoteCaptureBegin(const DecodedCall& call, trace::ApiCallRecord* record);
  void NoteCaptureEnd(const DecodedCall& call, trace::ApiCallRecord* record);
  // Instantiate, launch, upload or destroy: the graph id (an executable graph's is the graph it came from). Returns
  // whether a launch launches a graph whose capture made NCCL calls.
  bool NoteGraph(ApiKind kind, const DecodedCall& call, trace::ApiCallRecord* record);
  // During a capture, an event record or a stream wait: which stream forks into or joins which capture.
  void NoteCaptureFork(ApiKind kind, const DecodedCall& call, trace::ApiCallRecord* record);
  // The host backtrace and Python stack the call's kind and outcome ask for. A launch of a graph that holds NCCL
  // collectives gets the Python stack: the ranks' collective ledgers name each replay's line (a replay made on one
  // rank only is the usual cause of a graphed job's hang), at about 3.5 us a launch, graphs without collectives free.
  void AttachStacks(ApiKind kind, const PendingCall& pending, bool collective_launch, trace::ApiCallRecord* record);
  void OnNvtx(CUpti_CallbackId cbid, const CUpti_NvtxData* data);
  // An NVTX call of the default domain, or of a named one, as the event it records; false for another call.
  bool DecodeNvtxRange(CUpti_CallbackId cbid, const CUpti_NvtxData* data, trace::NvtxEvent* event);
  bool DecodeNvtxDomainRange(CUpti_CallbackId cbid, const CUpti_NvtxData* data, trace::NvtxEvent* event);
  // A domain created or a string registered: its name, for the events that name its handle later.
  void RegisterNvtxName(CUpti_CallbackId cbid, const CUpti_NvtxData* data);
  trace::StringId NvtxDomain(nvtxDomainHandle_t domain);  // 0 for a domain never created under the recorder
  // Writes the calling thread's name once per thread and trace.
  void NoteThreadName();
  void OnContextCreated(const CUpti_ResourceData* data);
  // Turns the launch callbacks on while a capture is in progress or a sampling window is open, off otherwise (modes
  // other than kAll). Lock-free so that it can run inside a callback and on the sampler thread at once: whoever
  // changes the wanted state applies it and re-checks after, so the last one to apply leaves the wanted state.
  void ApplyLaunchCallbacks();
  void SetSamplingWindow(bool open);
  void RunSampler();  // the sampler thread's body (LaunchRecording::kSampled)
  void CaptureStateAtEntry(const CallbackEntry& entry, const DecodedCall& call, PendingCall* pending);
  uint64_t StreamId(CUcontext context, CUstream stream, bool per_thread);
  uint32_t GraphId(CUgraph graph);    // cuptiGetGraphId; 0 when it fails (counted)
  uint32_t NodeCount(CUgraph graph);  // cuGraphGetNodes; 0 when it fails (counted)
  // What the graph a capture just made names of device memory, written as its manifest (graph_manifest.h).
  void WriteGraphManifest(CUgraph graph, const trace::ApiCallRecord& capture_end);
  trace::HostMemory HostMemoryOf(const DecodedCall& call);
  bool WantsBacktrace(ApiKind kind, int32_t return_code, CaptureStatus status) const;
  // Whether this is a cudaGraphLaunch of a graph captured before the one the thread launched last (graph ids grow in
  // capture order), and remembers the graph. Such a launch gets the Python stack (not the host backtrace): replay-order
  // needs the line that went back, and a training loop goes back once a step, not once a launch.
  static bool LaunchesAnEarlierGraph(ApiKind kind, uint32_t graph_id);
  // The calling thread's Python stack, interned (0 when the program is not CPython or the thread runs no Python).
  trace::PythonStackId CapturePythonStack();
  // A probe record's stack: the frames it sent ("file\x1fline\x1ffunction" joined by \x1e, innermost first), or
  // when it sent none the calling thread's.
  trace::PythonStackId ProbeStack(const char* frames);
  // The calling thread enters a synchronizing call the hang watch bounds; OnHang runs on the watcher thread.
  void BeginWait(const CallbackEntry& entry, const CUpti_CallbackData* data, bool runtime, PendingCall* pending);
  void OnHang(const HangWatch::Wait& wait);
  trace::StringId NvtxMessage(const nvtxEventAttributes_t* attributes);
  // A CUPTI or driver call of the recorder failed: counted in the trace, and written as an error record (the first
  // kMaxErrorRecords of them) naming the call and its code. Never stops the program.
  void CallFailed(const char* call, int code);
  // CUPTI's clock, the one its activity records carry; 0 (a failed call, counted) when CUPTI cannot read it.
  uint64_t Timestamp();
  void StatusFailed(const absl::Status& status);
  // The writer for callers outside the class (crash hooks); null before Start.
  friend trace::TraceWriter* RecorderWriter();

  trace::RunSettings settings_;
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
  // The program's steps while the first window is open (sampled recording only): the window closes after a few.
  std::unique_ptr<trace::FirstStepsCounter> first_steps_;
  std::atomic<uint32_t> launch_generation_{0};  // bumped whenever launch callbacks are turned off
  std::atomic<uint32_t> error_records_{0};      // error records written, for the rate limit

  absl::Mutex sampler_mutex_;
  bool sampler_stop_ ABSL_GUARDED_BY(sampler_mutex_) = false;
  std::thread* sampler_ = nullptr;  // left alone in a forked child, which holds a copy of a thread it does not have
  pid_t sampler_pid_ = 0;
  // --hang-timeout; its watcher thread runs in the process that started it only (a forked child has no bound).
  std::unique_ptr<HangWatch> hang_watch_;
  pid_t hang_watch_pid_ = 0;

  std::atomic<int> active_captures_{0};
  absl::Mutex mutex_;
  std::vector<ActiveCapture> captures_ ABSL_GUARDED_BY(mutex_);
  absl::flat_hash_map<CUgraphExec, uint32_t> exec_graph_ ABSL_GUARDED_BY(mutex_);  // exec -> source graph id
  absl::flat_hash_map<CUevent, uint64_t> event_streams_ ABSL_GUARDED_BY(mutex_);   // recorded during capture
  absl::flat_hash_map<uintptr_t, trace::StringId> nvtx_domains_ ABSL_GUARDED_BY(mutex_);
  // NCCL's NVTX domain ("NCCL", each of its API calls a push range) and its calls so far: a capture during which the
  // count grew made a graph that holds collectives (collective_graphs_, by graph id).
  std::atomic<trace::StringId> nccl_domain_{0};
  std::atomic<uint64_t> nccl_calls_{0};
  absl::flat_hash_set<uint32_t> collective_graphs_ ABSL_GUARDED_BY(mutex_);
  absl::flat_hash_map<uintptr_t, trace::StringId> nvtx_registered_ ABSL_GUARDED_BY(mutex_);
};

Recorder& TheRecorder();
trace::TraceWriter* RecorderWriter();

}  // namespace graphcheck::capture::internal

#endif  // GRAPHCHECK_CAPTURE_INTERNAL_RECORDER_STATE_H_
