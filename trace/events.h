// The trace event model: what the recorder (capture/) records about one process and what the checks read. Plain
// data with no CUDA types: capture/ normalizes CUPTI's callback ids and records into these. One Trace per process.
//
// Times are nanoseconds on CUPTI's clock (cuptiGetTimestamp), so API calls on the host and activity records from the
// GPU share one timeline. Strings (API names, kernel names, NVTX messages, backtrace frames) are interned in
// Trace::strings; id 0 is the empty string.
//
// Calls and kernels come in two forms: whole records (ApiCallRecord, KernelRecord) as the recorder writes them and the
// reader decodes them, and a compact in-memory form (ApiCall, KernelActivity) whose repeated part is interned
// (CallDetail, KernelShape), so that analysing a trace takes less memory than twice its file.
#ifndef GRAPHCHECK_TRACE_EVENTS_H_
#define GRAPHCHECK_TRACE_EVENTS_H_

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "core/environment.h"
#include "core/numerics_sample.h"
#include "trace/graph_manifest.h"

namespace graphcheck::trace {

using StringId = uint32_t;       // index into Trace::strings; 0 = ""
using BacktraceId = uint32_t;    // index into Trace::backtraces + 1; 0 = no backtrace
using PythonStackId = uint32_t;  // index into Trace::python_stacks + 1; 0 = no Python stack

enum class ApiDomain : uint8_t { kRuntime = 1, kDriver = 2 };

// What a call does, independent of runtime/driver flavour and API version (capture/ maps callback ids to these).
enum class ApiKind : uint8_t {
  kOther = 0,
  kKernelLaunch = 1,  // cudaLaunchKernel*, cuLaunchKernel*
  kCaptureBegin = 2,  // cudaStreamBeginCapture(ToGraph), cuStreamBeginCapture(ToGraph)
  kCaptureEnd = 3,    // cudaStreamEndCapture, cuStreamEndCapture
  kStreamSynchronize = 4,
  kDeviceSynchronize = 5,  // cudaDeviceSynchronize, cuCtxSynchronize
  kEventSynchronize = 6,
  kStreamQuery = 7,
  kEventQuery = 8,
  kMemcpy = 9,  // synchronous cudaMemcpy* / cuMemcpy* (not Async)
  kMemcpyAsync = 10,
  kMemset = 11,  // synchronous cudaMemset* / cuMemset*
  kMemsetAsync = 12,
  kMalloc = 13,       // cudaMalloc*, cuMemAlloc*, cuMemCreate
  kFree = 14,         // cudaFree, cuMemFree, cuMemRelease
  kHostAlloc = 15,    // cudaMallocHost, cudaHostAlloc, cuMemHostAlloc, cudaHostRegister
  kHostFree = 16,     // cudaFreeHost, cuMemFreeHost, cudaHostUnregister
  kMallocAsync = 17,  // stream-ordered allocation (capturable)
  kFreeAsync = 18,
  kStreamCreate = 19,
  kStreamDestroy = 20,
  kEventRecord = 21,
  kStreamWaitEvent = 22,
  kGraphCreate = 23,  // cudaGraphCreate, and the graph a capture end returns
  kGraphInstantiate = 24,
  kGraphUpload = 25,
  kGraphLaunch = 26,
  kGraphDestroy = 27,
  kGraphExecDestroy = 28,
  kModuleLoad = 29,     // cuModuleLoad*, cuLibraryLoad*, lazy kernel loading
  kContextCreate = 30,  // primary context retain / cuCtxCreate
};

enum class CaptureStatus : uint8_t { kNone = 0, kActive = 1, kInvalidated = 2 };
enum class CaptureMode : uint8_t { kGlobal = 0, kThreadLocal = 1, kRelaxed = 2, kUnknown = 3 };
enum class MemcpyDirection : uint8_t {
  kUnknown = 0,
  kHostToDevice = 1,
  kDeviceToHost = 2,
  kDeviceToDevice = 3,
  kHostToHost = 4,
  kDefault = 5,  // cudaMemcpyDefault: direction from pointers (then host_memory says what the host side was)
};
enum class HostMemory : uint8_t { kNotApplicable = 0, kPageable = 1, kPinned = 2, kUnknown = 3 };

// What a host API call shares with many others (its API, return code, call site, payload). In memory a trace interns
// these, so that a step's thousands of launches cost one ApiCall each. Fields that do not apply to a call's kind stay
// zero.
struct CallDetail {
  StringId name = 0;  // "cudaStreamSynchronize"
  ApiDomain domain = ApiDomain::kRuntime;
  bool legacy_stream = false;  // the call used the legacy default stream (stream handle 0 without per-thread default)
  MemcpyDirection direction = MemcpyDirection::kUnknown;
  HostMemory host_memory = HostMemory::kNotApplicable;
  uint32_t callback_id = 0;  // CUPTI callback id, for reference
  int32_t return_code = 0;   // cudaError_t or CUresult; 0 = success
  BacktraceId backtrace = 0;
  PythonStackId python_stack = 0;  // the calling thread's Python frames, taken with the backtrace (CPython programs)
  StringId kernel_name = 0;        // launches: demangled kernel name
  std::array<uint32_t, 3> grid = {0, 0, 0};
  std::array<uint32_t, 3> block = {0, 0, 0};
  uint32_t node_count = 0;  // graph instantiate / capture end
  uint64_t bytes = 0;       // memcpy / memset / allocation size
  // CUPTI's id of the graph (cuptiGetGraphId) made by a capture end or instantiated, launched or destroyed. Replayed
  // kernels carry another id, their executable graph's, so link a launch to its kernels by correlation id.
  uint64_t graph_id = 0;
  uint64_t other_stream_id = 0;  // stream created; stream waited on

  bool operator==(const CallDetail& o) const;
  template <typename H>
  friend H AbslHashValue(H h, const CallDetail& d) {
    return H::combine(std::move(h), d.name, d.domain, d.legacy_stream, d.direction, d.host_memory, d.callback_id,
                      d.return_code, d.backtrace, d.python_stack, d.kernel_name, d.grid, d.block, d.node_count, d.bytes,
                      d.graph_id, d.other_stream_id);
  }
};

// One host API call whole, as the recorder writes it and the reader decodes it, recorded at exit with its return
// code. In memory a trace keeps it split: an ApiCall and its interned CallDetail (Trace::AddCall, Trace::Record).
struct ApiCallRecord : CallDetail {
  uint64_t correlation_id = 0;  // matches activity records; 0 when CUPTI gave none
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint32_t thread_id = 0;  // OS thread id (gettid)
  ApiKind kind = ApiKind::kOther;
  uint64_t stream_id = 0;                               // CUPTI's stream id of the call's stream; 0 = none
  CaptureStatus capture_status = CaptureStatus::kNone;  // of the call's stream, or of the thread's capture, at entry
  CaptureMode capture_mode = CaptureMode::kUnknown;
  uint64_t capture_id = 0;  // cudaStreamGetCaptureInfo's id; 0 when not capturing
};

// One host API call in memory (40 bytes): what differs from call to call, and the index of its CallDetail
// (Trace::Detail). CUPTI's correlation and stream ids, and CUDA's capture ids, are 32-bit in practice.
struct ApiCall {
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint32_t correlation_id = 0;
  uint32_t thread_id = 0;
  uint32_t stream_id = 0;
  uint32_t capture_id = 0;
  uint32_t detail = 0;  // index into Trace::call_details
  ApiKind kind = ApiKind::kOther;
  CaptureStatus capture_status = CaptureStatus::kNone;
  CaptureMode capture_mode = CaptureMode::kUnknown;
};

// What a kernel shares with every other run of the same launch site or graph node; interned per trace.
struct KernelShape {
  StringId name = 0;
  uint32_t device = 0;
  std::array<uint32_t, 3> grid = {0, 0, 0};
  std::array<uint32_t, 3> block = {0, 0, 0};
  uint64_t graph_node_id = 0;  // inside a graph replay

  bool operator==(const KernelShape& o) const;
  template <typename H>
  friend H AbslHashValue(H h, const KernelShape& k) {
    return H::combine(std::move(h), k.name, k.device, k.grid, k.block, k.graph_node_id);
  }
};

// A kernel as the GPU ran it (CUPTI activity), whole, as written and decoded. Inside a graph replay, graph_id /
// graph_node_id are set. In memory a trace keeps it split (KernelActivity + KernelShape).
struct KernelRecord : KernelShape {
  uint64_t correlation_id = 0;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint64_t stream_id = 0;
  uint32_t graph_id = 0;
};

// A kernel in memory (32 bytes); its name, device, grid and block are in Trace::Shape.
struct KernelActivity {
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint32_t correlation_id = 0;
  uint32_t stream_id = 0;
  uint32_t graph_id = 0;
  uint32_t shape = 0;  // index into Trace::kernel_shapes
};

// A memcpy or memset as the GPU ran it.
struct MemoryActivity {
  enum class Kind : uint8_t { kMemcpy = 0, kMemset = 1 };
  Kind kind = Kind::kMemcpy;
  uint64_t correlation_id = 0;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint32_t device = 0;
  uint64_t stream_id = 0;
  uint32_t graph_id = 0;
  uint64_t bytes = 0;
  MemcpyDirection direction = MemcpyDirection::kUnknown;
  HostMemory host_memory = HostMemory::kNotApplicable;
};

// A whole graph launch as the GPU ran it (CUPTI graph-level tracing).
struct GraphLaunchActivity {
  uint64_t correlation_id = 0;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint32_t device = 0;
  uint64_t stream_id = 0;
  uint32_t graph_id = 0;
};

struct NvtxEvent {
  enum class Kind : uint8_t { kPush = 0, kPop = 1, kRangeStart = 2, kRangeEnd = 3, kMark = 4 };
  Kind kind = Kind::kPush;
  uint32_t thread_id = 0;
  uint64_t time_ns = 0;
  StringId domain = 0;    // "" for the default domain
  StringId message = 0;   // empty for pop / range end
  uint64_t range_id = 0;  // start/end pairs
  // Since 1.13, NCCL's calls: the communicator's id from NCCL's NVTX payload (its commHash, the same on every rank of
  // the communicator); 0 when not known.
  uint64_t communicator = 0;
};

// Symbolized host frames, innermost first, as string ids.
struct Backtrace {
  std::vector<StringId> frames;
};

// One Python frame as recorded: file and function as string ids, the line 1-based (0 = unknown).
struct PythonFrameRef {
  StringId file = 0;
  uint32_t line = 0;
  StringId function = 0;

  bool operator==(const PythonFrameRef& o) const { return file == o.file && line == o.line && function == o.function; }
  template <typename H>
  friend H AbslHashValue(H h, const PythonFrameRef& f) {
    return H::combine(std::move(h), f.file, f.line, f.function);
  }
};

// The Python stack of the thread that made a call, innermost first.
struct PythonStack {
  std::vector<PythonFrameRef> frames;
};

struct ProcessInfo {
  uint32_t pid = 0;
  uint32_t parent_pid = 0;
  int32_t rank = -1;        // RANK, -1 when unset
  int32_t local_rank = -1;  // LOCAL_RANK
  int32_t world_size = -1;  // WORLD_SIZE
  uint64_t start_ns = 0;
  std::string hostname;
  std::vector<std::string> command_line;
};

struct DeviceInfo {
  uint32_t index = 0;
  GpuInfo gpu;
};

// How the recorder treated kernel launches outside captures. Every other call is always recorded, and so is every
// launch inside a capture.
enum class LaunchRecording : uint8_t {
  kAll = 0,          // every launch, and the GPU times of every kernel, copy and memset
  kSampled = 1,      // launches and GPU times only inside Trace::launch_windows
  kCaptureOnly = 2,  // no launches outside captures, no GPU times
};

// What happened when the recorder set up CUPTI: a subscriber already present is named here (cupti-busy).
struct RecorderStatus {
  bool subscribed = true;
  std::string other_subscriber;  // name reported by cuptiSubscribe_v2, when subscription failed
  std::string message;
  LaunchRecording launches = LaunchRecording::kAll;
};

// A stretch of time in which a sampling recorder recorded every launch and GPU time. A launch made inside it was
// recorded with its kernel's times; what started before or ended after may be partial.
struct LaunchWindow {
  uint64_t start_ns = 0;
  uint64_t end_ns = ~uint64_t{0};  // open: the process ended (or was killed) inside the window
};

// Ways a record can be lost, counted by the recorder in the trace file's first page (since format 1.2).
enum class LossKind : uint8_t {
  kActivityDropped = 0,       // CUPTI dropped activity records (cuptiActivityGetNumDroppedRecords)
  kWriterDropped = 1,         // records the trace writer could not place (disk full, file could not grow)
  kLaunchExitLost = 2,        // launches whose exit callback was lost when launch callbacks were turned off
  kCallError = 3,             // a CUPTI or driver call the recorder made failed; what it would have filled is missing
  kActivityBufferFailed = 4,  // an activity buffer could not be allocated (CUPTI then drops records)
};
inline constexpr size_t kLossKinds = 5;
absl::string_view LossKindName(LossKind kind);  // "activity-dropped", ...

// How the writing process ended, as its trace's header says (since format 1.2).
enum class TraceEnd : uint8_t {
  kUnknown = 0,  // a trace older than 1.2: not recorded
  kRunning = 1,  // no end written: still running, or killed (SIGKILL, os._exit, power loss)
  kClean = 2,    // the recorder stopped at exit
  kCrashed = 3,  // a crash signal (TraceIntegrity::signal)
  kHung = 4,     // since 1.6: the recorder's hang watch ended the process (a Hang record says where)
};

// One kind of loss, as counted: how many records and the span of times (on the trace's clock) they were counted at.
struct LossCount {
  LossKind kind = LossKind::kActivityDropped;
  uint64_t count = 0;
  uint64_t first_ns = 0;  // 0 when unknown
  uint64_t last_ns = 0;
};

// A loss event the recorder wrote as a record (rate-limited): which call failed with which code, or which context and
// stream CUPTI dropped activity records of.
struct RecorderError {
  LossKind kind = LossKind::kCallError;
  uint64_t time_ns = 0;
  uint64_t count = 1;
  StringId call = 0;  // "cuStreamGetCaptureInfo"; empty for activity drops
  int32_t code = 0;   // CUresult / CUptiResult
  uint32_t context_id = 0;
  uint64_t stream_id = 0;
};

// What the Python probe saw (since format 1.3): what only Python knows about captures and torch.compile. The probe
// (python/probe) records; the checks judge. Replays need no event of their own: the graph a capture-end event
// names is the CUDA graph of the capture window it closes, whose cudaGraphLaunch calls the recorder keeps anyway.
enum class ProbeEventKind : uint8_t {
  kCaptureBegin = 1,        // CUDAGraph.capture_begin called: origin, graph, pool, mode (in `type`)
  kCaptureEnd = 2,          // capture_end returned
  kCaptureException = 3,    // an exception left a capture (its body, capture_begin or capture_end), caught or not
  kCompileSkip = 4,         // torch.compile's inductor ran a function without CUDA graphs: the reason in `text`
  kOutputsInvalidated = 5,  // cudagraph trees freed outputs the program still held (the next access raises)
  kUncaughtException = 6,   // an exception ended the program or a thread: type, message, its traceback's frames
  // Since 1.4. A tensor a graph reads now lives elsewhere: a parameter or buffer of a module graphed by
  // make_graphed_callables, or a local name that held a manual capture's static input; since 1.10 also a parameter
  // or buffer of any module whose forward ran inside a capture (`origin`: who began it). `type`: "parameter",
  // "buffer" or "static-input"; `text`: its name; `value`: its address at capture; `value_now`: its address now.
  // Since 1.10, `pool`: 1 when the memory it had at capture has been freed (the graph reads freed memory).
  kStateRebound = 7,
  // Since 1.4. The program holds more references to a graph's output memory at each replay: outputs kept across
  // replays without a copy, which the next replay overwrites. `text`: the output's name; `value`: references held
  // beyond those at the first replay looked at.
  kOutputsHeld = 8,
  // Since 1.7. A DistributedDataParallel module was constructed: `graph`: the module's id; `value`: 1 when the current
  // stream was the device's default stream (DDP's gradient accumulators then run on it in backward); `text` says
  // which. The stack is the constructor's caller.
  kDdpConstructed = 9,
  // Since 1.7. A DDP forward that synchronizes gradients ran inside a stream capture: `graph`: the module's id;
  // `value`: how many such forwards the module has run, this one included; `value_now`: 1 when DDP rebuilt its
  // gradient buckets in this forward; `text`: "static_graph" when the module was built with static_graph=True.
  kDdpCapturedForward = 10,
  // Since 1.8. A host value a captured graph baked in has changed while the graph is still replayed. `type`, the
  // value's role: "optimizer-hyperparameter" (a number in an optimizer's param_groups that stepped inside the
  // capture: a float learning rate), "module-attribute" (a Python number a graphed module's forward reads as
  // `self.NAME`) or "grad" (a gradient the graph writes for an optimizer that steps outside it); `text`: its name
  // ("Adam param_groups[0].lr", "encoder.scale", "model.fc.weight"); `graph`: the Python graph's or graphed module's
  // id; `value` / `value_now`: the number at capture and now as IEEE-754 bits, or for "grad" the gradient's address
  // at capture and now (0: None); `pool`: 1 when the stack is the call that made the change (a scheduler's step(),
  // zero_grad()), 0 when the change was seen at a replay or call of the graph.
  kHostValueChanged = 11,
  // Since 1.8. A callable graphed by make_graphed_callables was called with an input of another shape or dtype than
  // it was captured with. `graph`: the graphed module's (or function's) id; `value`: the input's index (0xffffffff:
  // another number of inputs); `type`: "raised" (PyTorch raised copying it into the static input: `text`'s second
  // line is the exception), "broadcast" (it was copied into the captured shape silently) or "converted" (same shape,
  // another dtype, converted silently); `text`: "input 0: 8x64 float32, captured 32x64 float32".
  kInputShapeChanged = 12,
  // Since 1.8. The probe's own eager work under --shadow begins and ends on this thread (`graph`: the module or graph
  // it compares): not the program's steps.
  kAuditBegin = 13,
  kAuditEnd = 14,
  // Since 1.8. Under --shadow, a captured graph's replays are not compared: `graph`: its id; `type`: the call its
  // capture made; `text`: why (its body is not one call, a process group is initialized, running it again raised).
  kShadowSkipped = 15,
  // Since 1.8, under --hang-timeout. A wait outside CUDA that can stall a job begins and ends on this thread (`text`:
  // what it waits in, "torch.distributed.destroy_process_group"); the recorder bounds it like a synchronizing call.
  kWaitBegin = 16,
  kWaitEnd = 17,
  // Since 1.8, under --hang-timeout, right before a destroy_process_group wait: a captured graph still alive (`graph`:
  // its id). A graph holding NCCL collectives keeps the communicator busy, and the destroy waits on it.
  kGraphAlive = 18,
  // Since 1.8. Megatron Core's CudaGraphManager put its first layer graph on the list that create_cudagraphs()
  // captures (the layers run eagerly until that call): `value`: the layer's number (from 1; 0 unknown). The stack is
  // the program's call that ran the layer. Sent once per process.
  kMegatronGraphRecorded = 19,
  // Since 1.10, right after a capture-end event: the tensors the probe can name for the graph just captured (the
  // parameters, buffers and gradients of the modules whose forward ran inside it, the state of optimizers that stepped
  // inside it, a manual capture's static inputs and outputs) and the segments of its memory pool, as
  // trace::ParseNamedTensors reads them from `text`. `graph`: the Python graph's id; `value`: the host values it baked
  // in that the probe watches (numbers and training flags the captured code read, optimizer hyperparameters);
  // `value_now`: the modules whose forward ran inside the capture. Since 1.15, for the program's own captures, `type`:
  // what the capture wrote, "own-memory" (only memory it allocated) or "program-memory" (trace::CaptureWrites).
  kGraphTensors = 20,
  // Since 1.10. A replay of a graph runs while modules whose forward reads their training flag are in another mode
  // than at capture (a validation pass under model.eval() replaying training graphs). `graph`: the Python graph's
  // id; `value`: 1 when those modules were captured in training mode; `value_now`: how many modules differ; `text`:
  // their names, comma-separated (the first few).
  kTrainingModeChanged = 21,
  // Since 1.10. A random number was drawn on the host inside a capture: the graph replays the value drawn then.
  // `graph`: the Python graph's id; `type`: the generator ("python-random", "numpy", "torch-cpu"); `text`: the call
  // ("random.random"). The stack is the draw's when the probe saw the call, else the capture's end.
  kHostRandomDraw = 22,
  // Since 1.10. Before a graphed backward replays, parameters' .grad tensors live in the memory pool of its graphs
  // (PyTorch's AccumulateGrad took the graph's static gradient output as .grad when it found none): the replay
  // overwrites them, and accumulation then adds the new gradient to itself. `graph`: the graphed module's id;
  // `value`: how many; `value_now`: the first .grad's address; `text`: their names, comma-separated (the first few).
  // The stack is the program's call that ran the backward.
  kGradAliased = 23,
  // Since 1.10. The program dropped its last Python reference to a tensor a graph reads (`self.buf = torch.cat(...)`
  // rebinding a module's buffer): its memory is freed when nothing else holds it. `graph`: the Python graph's id;
  // `type`: its role; `text`: its name; `value`: its address. The stack is the line that dropped it.
  kTensorReleased = 24,
  // Since 1.11, under `graphcheck run --plan`: one of the program's outermost module calls (a module called from no
  // other module's forward) begins and ends, outside captures. `graph`: the module's Python id; `value`: the call's
  // number, from 1 (the two events of one call carry the same); at the end, `text`: the module's class, then one
  // "name=shape" per tensor input ("0=32x128", "input_ids=8x512"; 0-d tensors "scalar"), tab-separated; since 1.13
  // `pool` and `value_now`, the nested calls the probe's hooks saw and what the hooks added to each (ns), 0 from
  // probes that hook no nested call. The stack at the begin is the program's call.
  kModuleCallBegin = 25,
  kModuleCallEnd = 26,
  // Since 1.11: the program's outermost torch.autograd.backward() (loss.backward()) on this thread begins and ends.
  // The CUDA backward runs on autograd's own threads, which run no Python: their calls are located at this call.
  // `value`: the backward's number, from 1 (both events). The stack at the begin is the program's call.
  kBackwardBegin = 27,
  kBackwardEnd = 28,
  // Since 1.12, at a capture's end: state the program keeps across steps was made inside the capture, in the graph's
  // memory pool, so every replay makes it again from what it was at capture. `graph`: the Python graph's id; `type`:
  // "parameter" or "buffer" (the captured code replaced a module's tensor: `self.ema = self.ema * 0.9 + ...`; `text`
  // its name, `value` the address it had before, `pool` that tensor's bytes, the stack the line that replaced it) or
  // "optimizer-state" (an optimizer's first step inside the capture created it: `text` the first few names,
  // comma-separated, `pool` how many tensors, the stack the program's step()); `value_now`: the (first) address now.
  kStateMadeInCapture = 29,
  // Since 1.14: a pass of the program's own loop begins (the first anchor of its pass; python/probe/graphcheck_probe/
  // steps.py). `type`: the anchor, "optimizer-step" (an optimizer.step() outside captures; empty in traces recorded
  // before anchors were named) or "replay" (a graph replay, before any optimizer step);
  // `value`: the loop's phase, from 1 (another loop, or the same loop in another call of its function, is another
  // phase); `text`: where the loop is ("train.py:30 in main"). No stack.
  kProgramStep = 30,
};
inline constexpr uint8_t kMaxProbeEventKind = 30;
// A number of a host-value-changed event (`value`, `value_now`), sent as its IEEE-754 bits.
double HostValueNumber(uint64_t bits);
absl::string_view ProbeEventKindName(ProbeEventKind kind);  // "capture-begin", ...

// Who began a capture, from the Python stack at capture_begin.
enum class ProbeOrigin : uint8_t {
  kUnknown = 0,
  kUser = 1,                // the program's own torch.cuda.graph / CUDAGraph.capture_begin
  kGraphedCallables = 2,    // torch.cuda.make_graphed_callables
  kCudagraphTrees = 3,      // torch.compile(mode="reduce-overhead") recording a function
  kCudagraphTreesInit = 4,  // cudagraph trees' empty capture that creates its memory pool
  kTransformerEngine = 5,   // transformer_engine.pytorch.make_graphed_callables
  // Megatron Core's CudaGraphManager (cuda_graph_impl="local"): one forward and one backward graph per layer, `value`
  // the layer's number (from 1; 0 unknown), `text` "forward" or "backward"
  kMegatron = 6,
  // Megatron Core's FullCudaGraphWrapper or OptimizerCudaGraphWrapper (cuda_graph_impl="full_iteration"): `text`
  // "training", "validation" or "optimizer"
  kMegatronFullIteration = 7,
};
inline constexpr uint8_t kMaxProbeOrigin = 7;
absl::string_view ProbeOriginName(ProbeOrigin origin);  // "user", "make_graphed_callables", ...

struct ProbeEvent {
  ProbeEventKind kind = ProbeEventKind::kCaptureBegin;
  ProbeOrigin origin = ProbeOrigin::kUnknown;
  uint32_t thread_id = 0;
  uint64_t time_ns = 0;
  uint64_t graph = 0;       // the Python CUDAGraph object: ties a graph's begin, end and exceptions together
  uint64_t pool = 0;        // its memory pool (CUDAGraph.pool()), 0 when unknown
  uint64_t value = 0;       // kCaptureBegin by cudagraph trees: the compiled function's id; kCaptureEnd: see value_now
  StringId type = 0;        // exceptions: the exception's type; kCaptureBegin: the capture error mode
  StringId text = 0;        // the exception's message, the skip reason, ...
  PythonStackId stack = 0;  // where: the raise site for exceptions, the calling frames otherwise
  // Since 1.4, kStateRebound: the address now. Since 1.5, kCaptureEnd: what PyTorch's allocator had allocated at the
  // capture's begin, `value` holding what it had at its end (0: unknown).
  uint64_t value_now = 0;
};

// What a shadow comparison compared (since format 1.8; earlier ones are all module forwards).
enum class ShadowSubject : uint8_t {
  kModuleForward = 0,   // an output of a module graphed by make_graphed_callables against its eager forward
  kCapturedRegion = 1,  // a tensor a replay of the program's own capture wrote, against its body's call run eagerly
  // Since 1.11, a parameter's gradient from the backward graph of a module graphed by make_graphed_callables, against
  // the gradient of its eager forward's outputs for the same output gradients.
  kModuleBackward = 2,
  // Since 1.11, a parameter's .grad right after that backward accumulated into it, against .grad before the backward
  // plus the gradient PyTorch's AccumulateGrad received: equal bit for bit unless something wrote into .grad's memory.
  kGradAccumulation = 3,
};
inline constexpr uint8_t kMaxShadowSubject = 3;

// Since format 1.6: one output of a module graphed by make_graphed_callables, compared by the Python probe under
// `graphcheck run --shadow N` on one of the module's first N graphed calls: the module's own eager forward ran on the
// same input right after the graphed call, twice (the random state and buffers restored before each run), so the
// figures are a numerics sample's (NumericsFigures, core/numerics_sample.h): graphed against the first eager run,
// and the second eager run against the first as eager's own spread.
struct ShadowComparison : NumericsFigures {
  uint32_t thread_id = 0;
  uint64_t time_ns = 0;
  uint64_t module = 0;       // the graphed module (Python id): ties one module's calls together
  StringId module_type = 0;  // its class, "Bottleneck"
  uint32_t call = 0;         // which call of the graphed forward, from 1
  StringId name = 0;         // "output 0", "output 1.logits": the output's place in what forward returned
  StringId dtype = 0;        // "float32", ...; under autocast the output's own dtype
  StringId precision = 0;    // "float32", "tf32", "bfloat16", "float16": the math that computed it (autocast, TF32)
  PythonStackId stack = 0;   // the program's call of the module; for the backward subjects, its call of the backward
  // The values are not comparable and the probe sent only this: before 1.8, the eager forward advanced the CUDA
  // generator (graph and eager drew different random numbers); since 1.8, which puts every random source back before
  // each eager run, the graph and its eager code advanced the CUDA generator by different amounts (a kernel that
  // draws otherwise under capture), so their draws cannot match.
  bool random = false;
  uint64_t shadow_ns = 0;  // host time the comparison of this call took (both eager runs, restores, reductions)
  // Since 1.8: what was compared; for kCapturedRegion, `module` is the Python graph's id, `module_type` the call its
  // capture made ("train_step"), `call` the replay, `name` the tensor ("Adam exp_avg of model.fc.weight").
  ShadowSubject subject = ShadowSubject::kModuleForward;
  // Since 1.8: the random sources the eager run drew from, comma-separated: "cuda", "cpu", "python-random", "numpy".
  // A draw on the host is one the capture froze: the graph replays the value drawn at capture.
  StringId draws = 0;
};

// Since format 1.6, under `graphcheck run --hang-timeout`: a thread waited in a synchronizing CUDA call (stream,
// event or device synchronize, a synchronous copy) longer than the bound, and the recorder ended the process (exit
// status 124) after writing this. Where each process of a job was then is what a hang in a collective needs said.
struct Hang {
  uint32_t thread_id = 0;
  uint64_t time_ns = 0;        // when the watch fired
  uint64_t since_ns = 0;       // when the wait began
  uint64_t timeout_ns = 0;     // the bound
  StringId call = 0;           // "cudaStreamSynchronize"
  uint64_t stream_id = 0;      // the stream waited on; 0: none or unknown
  uint32_t last_graph_id = 0;  // the graph this thread launched last (its captured graph's id); 0: none
  PythonStackId stack = 0;     // the waiting thread's Python stack, when one was taken at the wait
};

// Since format 1.7: the name a thread had when it made its first CUDA call ("pt_nccl_watchdg", "pt_autograd_0"), so
// that a report can say which library's thread made a call: PyTorch names its threads, Python threads keep the
// process's name.
struct ThreadName {
  uint32_t thread_id = 0;
  StringId name = 0;
};

// Since format 1.9: one allocation or free of PyTorch's CUDA caching allocator, from its own history
// (torch.cuda.memory._record_memory_history, turned on by the Python probe at CUDA's first use and read at exit), on
// the recorder's clock. The allocator reuses its cached blocks, so these, not cudaMalloc calls, tell what a region of
// the program holds live: analysis/memory_forecast.h forecasts a graph's private pool from them.
struct AllocatorEvent {
  enum class Action : uint8_t {
    kAlloc = 0,  // a block handed to a tensor
    kFree = 1,   // the block back in the cache, reusable (the allocator's "free_completed")
  };
  Action action = Action::kAlloc;
  uint32_t device = 0;
  uint64_t time_ns = 0;
  uint64_t address = 0;
  uint64_t bytes = 0;  // as requested (the allocator rounds it up to 512 bytes)
};

// What the trace says about its own completeness.
struct TraceIntegrity {
  TraceEnd end = TraceEnd::kUnknown;
  int32_t signal = 0;             // kCrashed: the signal
  uint64_t end_time_ns = 0;       // wall clock (CLOCK_REALTIME) of the end, when written
  uint64_t expected_bytes = 0;    // how long the writer made the file (0 before 1.2)
  uint64_t file_bytes = 0;        // how long it is
  uint64_t chunks = 0;            // chunks read
  std::vector<LossCount> losses;  // non-zero counts only
  std::vector<RecorderError> errors;

  bool Counted() const { return end != TraceEnd::kUnknown; }
};

// Everything recorded about one process.
struct Trace {
  ProcessInfo process;
  std::vector<DeviceInfo> devices;
  Environment environment;  // the variables that matter to capture
  RecorderStatus recorder;
  std::vector<std::string> strings = {""};
  std::vector<Backtrace> backtraces;
  std::vector<PythonStack> python_stacks;
  std::vector<ApiCall> api_calls;  // in start order per thread; sorted by start_ns after reading
  std::vector<CallDetail> call_details;
  std::vector<KernelActivity> kernels;
  std::vector<KernelShape> kernel_shapes;
  std::vector<MemoryActivity> memory;
  std::vector<GraphLaunchActivity> graph_launches;
  std::vector<NvtxEvent> nvtx;
  std::vector<LaunchWindow> launch_windows;          // LaunchRecording::kSampled only; sorted, disjoint
  std::vector<ProbeEvent> probe_events;              // the Python probe's (since 1.3); sorted by time
  std::vector<ShadowComparison> shadow_comparisons;  // the probe's under --shadow (since 1.6); sorted by time
  std::vector<Hang> hangs;                           // --hang-timeout (since 1.6): at most one per process
  std::vector<ThreadName> thread_names;              // since 1.7: one per thread that made a CUDA call
  std::vector<AllocatorEvent> allocations;           // since 1.9 (Python programs); sorted by time
  std::vector<GraphManifest> graph_manifests;        // since 1.10: one per capture that made a graph; by time
  std::vector<std::string> read_warnings;  // damage the reader stepped over ("truncated record at offset 4096")
  TraceIntegrity integrity;

  // Interning tables of AddCall / AddKernel: detail or shape -> index.
  absl::flat_hash_map<CallDetail, uint32_t> call_detail_index;
  absl::flat_hash_map<KernelShape, uint32_t> kernel_shape_index;

  absl::string_view String(StringId id) const { return id < strings.size() ? strings[id] : absl::string_view(); }
  const Backtrace* FindBacktrace(BacktraceId id) const {
    return id == 0 || id > backtraces.size() ? nullptr : &backtraces[id - 1];
  }
  const PythonStack* FindPythonStack(PythonStackId id) const {
    return id == 0 || id > python_stacks.size() ? nullptr : &python_stacks[id - 1];
  }
  // The frames of backtrace `id` as text, innermost first; empty for none.
  std::vector<std::string> BacktraceFrames(BacktraceId id) const;
  const CallDetail& Detail(const ApiCall& call) const { return call_details[call.detail]; }
  // The name thread `thread_id` had at its first CUDA call; "" when not recorded (traces before 1.7).
  absl::string_view ThreadNameOf(uint32_t thread_id) const;
  const KernelShape& Shape(const KernelActivity& kernel) const { return kernel_shapes[kernel.shape]; }
  // Interns `s`, for building traces in tests and in the reader (linear: not for hot paths).
  StringId Intern(absl::string_view s);
  // Appends a call or kernel, interning what it shares with others; returns the stored event.
  ApiCall& AddCall(const ApiCallRecord& record);
  KernelActivity& AddKernel(const KernelRecord& record);
  // A stored call or kernel whole again (tests, dumps).
  ApiCallRecord Record(const ApiCall& call) const;
  KernelRecord Record(const KernelActivity& kernel) const;
  // Whether every launch in [start_ns, end_ns) was recorded with its GPU times (see LaunchRecording).
  bool LaunchesRecorded(uint64_t start_ns, uint64_t end_ns) const;
  // Whether launch recording was on at any time in [start_ns, end_ns): the program then paid for the recorder's launch
  // callbacks and activity records.
  bool LaunchRecordingOverlaps(uint64_t start_ns, uint64_t end_ns) const;
};

absl::string_view ApiKindName(ApiKind kind);
absl::string_view LaunchRecordingName(LaunchRecording mode);  // "all", "sampled", "capture-only"

// Fills Trace::graph_launches, when the recorder wrote none, from the replayed kernels: a graph's kernels carry the
// correlation id of the cudaGraphLaunch that replayed them (seen on an H200 with CUDA 13), so each launch's GPU
// interval is the span of its kernels. Keeps graph_launches sorted by start.
void DeriveGraphLaunches(Trace* trace);

}  // namespace graphcheck::trace

#endif  // GRAPHCHECK_TRACE_EVENTS_H_
