// The Python probe's events as typed records: one struct per event kind, with named fields, decoded and validated
// once (DecodeProbeRecords). The probe sends every kind in the same six raw fields (ProbeEvent: graph, pool, value,
// value_now, type, text); what each means for each kind is said here, in one place, and nowhere else reads them.
// The Python side sends each kind through one function with named arguments (python/probe/graphcheck_probe/
// events.py); tests/capture/probe_abi_test.py holds the two sides to each other, role names included.
#ifndef GRAPHCHECK_TRACE_PROBE_RECORDS_H_
#define GRAPHCHECK_TRACE_PROBE_RECORDS_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "trace/events.h"

namespace graphcheck::trace {

// What every record carries: which event it is, when and where it happened.
struct ProbeHeader {
  size_t event = 0;  // index into Trace::probe_events
  uint32_t thread_id = 0;
  uint64_t time_ns = 0;
  PythonStackId stack = 0;  // the program's frames (the kind says which call), 0 for none
  ProbeOrigin origin = ProbeOrigin::kUnknown;
};

// CUDAGraph.capture_begin called. `graph` ties a graph's begin, end, exceptions and contract records together.
struct CaptureBegin {
  ProbeHeader at;
  uint64_t graph = 0;
  absl::string_view error_mode;    // the capture error mode ("global", "thread_local", "relaxed")
  uint64_t compiled_function = 0;  // cudagraph trees: the compiled function's id; 0 otherwise
  uint32_t megatron_layer = 0;     // kMegatron: the layer's number, from 1; 0 unknown or another origin
  // kMegatron: "forward" or "backward"; kMegatronFullIteration: "training", "validation" or "optimizer".
  absl::string_view megatron_part;
};

// CUDAGraph.capture_end returned.
struct CaptureEnd {
  ProbeHeader at;
  uint64_t graph = 0;
  uint64_t pool = 0;                // CUDAGraph.pool(), 0 unknown
  uint64_t allocated_at_end = 0;    // PyTorch's allocator's allocated bytes (since 1.5; 0 unknown)
  uint64_t allocated_at_begin = 0;  // the same at the capture's begin
};

// An exception left a capture (its body, capture_begin or capture_end), caught or not, or ended the program or a
// thread. The stack is the raise site's frames.
struct PythonExceptionRecord {
  ProbeHeader at;
  bool in_capture = false;  // kCaptureException; false: kUncaughtException
  uint64_t graph = 0;       // in_capture: the capture's graph
  absl::string_view type;   // "RuntimeError"
  absl::string_view message;
};

// torch.compile's inductor ran a function without CUDA graphs.
struct CompileSkip {
  ProbeHeader at;
  absl::string_view reason;
};

// cudagraph trees freed outputs the program still held (the next access raises).
struct OutputsInvalidated {
  ProbeHeader at;
  uint64_t held = 0;
};

// The role of a tensor a graph reads, as the probe names it.
enum class TensorRole : uint8_t {
  kParameter = 0,
  kBuffer = 1,
  kStaticInput = 2,     // a local name that held a manual capture's static input
  kOptimizerState = 3,  // a tensor of an optimizer that stepped inside the capture
};
inline constexpr uint8_t kMaxTensorRole = 3;
absl::string_view TensorRoleName(TensorRole role);  // "parameter", "buffer", "static-input", "optimizer-state"

// A tensor a graph reads now lives elsewhere (since 1.4), or its memory was freed (since 1.10).
struct StateRebound {
  ProbeHeader at;
  uint64_t graph = 0;
  TensorRole role = TensorRole::kParameter;
  absl::string_view name;
  uint64_t address_at_capture = 0;
  uint64_t address_now = 0;
  bool freed = false;  // the memory it had at capture has been freed: the graph reads freed memory
};

// The program holds more references to a graph's output memory at each replay (since 1.4).
struct OutputsHeld {
  ProbeHeader at;
  uint64_t graph = 0;
  absl::string_view name;
  uint64_t references_added = 0;  // beyond those at the first replay looked at; 0: kept in an attribute, read first
  // Since 1.16: the Python graph, captured earlier into the same pool, across whose replay the program read `name`,
  // which holds this graph's output at `address` (0: not such an event).
  uint64_t overwritten_by = 0;
  uint64_t address = 0;
};

// A DistributedDataParallel module was constructed (since 1.7). The stack is the constructor's caller.
struct DdpConstructed {
  ProbeHeader at;
  uint64_t module = 0;
  bool on_default_stream = false;  // DDP's gradient accumulators then run on the default stream in backward
};

// A DDP forward that synchronizes gradients ran inside a stream capture (since 1.7).
struct DdpCapturedForward {
  ProbeHeader at;
  uint64_t module = 0;
  uint64_t forwards = 0;         // such forwards the module has run, this one included
  bool rebuilt_buckets = false;  // DDP rebuilt its gradient buckets in this forward
  bool static_graph = false;     // built with static_graph=True
};

// What a host value a graph baked in is (since 1.8).
enum class HostValueRole : uint8_t {
  kOptimizerHyperparameter = 0,  // a number in the param_groups of an optimizer that stepped inside the capture
  kModuleAttribute = 1,          // a Python number a graphed module's forward reads as `self.NAME`
  kGrad = 2,                     // a gradient the graph writes for an optimizer that steps outside it: addresses
  kGlobal = 3,                   // the captured code's reads (host_reads.py): a module global,
  kClosure = 4,                  // a closure cell,
  kAttribute = 5,                // an attribute of any object,
  kEntry = 6,                    // a constant-key dict or list entry
  kRequiresGrad = 7,             // a parameter's requires_grad (1 or 0)
  kGradMode = 8,                 // torch's grad mode, where the captured code read it (1 or 0)
  // CUDA autocast (AutocastState), once a replay ran in the capture's state and a later one in another: the program
  // meant the precision to change.
  kAutocast = 9,
  // How many param groups an optimizer that stepped inside the capture has (add_param_group after it).
  kOptimizerParamGroups = 10,
};
inline constexpr uint8_t kMaxHostValueRole = 10;
absl::string_view HostValueRoleName(HostValueRole role);  // "optimizer-hyperparameter", ...

// A kAutocast value: 0 off, 1 on (in a dtype not recorded), 2 on in float16, 3 in bfloat16, 4 in float32.
// "off", "on", "on in float16", ...
absl::string_view AutocastStateName(double state);

// A host value a captured graph baked in has changed while the graph is still replayed (since 1.8).
struct HostValueChange {
  ProbeHeader at;
  uint64_t graph = 0;  // the Python graph's or graphed module's id
  HostValueRole role = HostValueRole::kOptimizerHyperparameter;
  absl::string_view name;     // "Adam param_groups[0].lr", "encoder.scale", "model.fc.weight"
  absl::string_view read_at;  // where the captured code read it ("train.py:42 in step"); "" when not sent
  double captured = 0;        // the number at capture and now; kGrad: 0 (see the addresses)
  double now = 0;
  uint64_t grad_at_capture = 0;  // kGrad: the .grad's address at capture and now (0: None)
  uint64_t grad_now = 0;
  // The stack is the call that made the change (a scheduler's step(), the line that stored it, zero_grad()); false:
  // the change was seen at a replay or call of the graph.
  bool at_change = false;
};

// How a graphed callable took an input of another shape or dtype than it was captured with (since 1.8).
enum class ShapeChangeHandling : uint8_t {
  kRaised = 0,     // PyTorch raised copying it into the static input
  kBroadcast = 1,  // copied into the captured shape silently
  kConverted = 2,  // same shape, another dtype, converted silently
};
inline constexpr uint8_t kMaxShapeChangeHandling = 2;
absl::string_view ShapeChangeHandlingName(ShapeChangeHandling handling);  // "raised", "broadcast", "converted"

struct InputShapeChange {
  ProbeHeader at;
  uint64_t graph = 0;             // the graphed module's (or function's) id
  std::optional<uint32_t> input;  // the input's index; none: another number of inputs
  ShapeChangeHandling handling = ShapeChangeHandling::kRaised;
  absl::string_view description;  // "input 0: 8x64 float32, captured 32x64 float32"
  absl::string_view error;        // kRaised: "RuntimeError: ..."; "" otherwise
};

// The start or end of a stretch on one thread: the probe's own eager work under --shadow (audit), a wait outside
// CUDA under --hang-timeout, the program's outermost backward() (since 1.11).
struct ProbeMark {
  ProbeHeader at;
  bool begin = false;
  uint64_t graph = 0;      // audit: the module or graph it compares
  uint64_t number = 0;     // backward: its number, from 1 (both marks)
  absl::string_view what;  // wait: what it waits in ("torch.distributed.destroy_process_group")
};

// Under --shadow, a captured graph's replays are not compared (since 1.8).
struct ShadowSkipped {
  ProbeHeader at;
  uint64_t graph = 0;
  absl::string_view call;  // the call its capture made
  absl::string_view reason;
};

// Under --hang-timeout, right before a destroy_process_group wait: a captured graph still alive (since 1.8).
struct GraphAlive {
  ProbeHeader at;
  uint64_t graph = 0;
};

// Megatron Core's CudaGraphManager put its first layer graph on the list create_cudagraphs() captures (since 1.8).
struct MegatronGraphRecorded {
  ProbeHeader at;
  uint32_t layer = 0;  // from 1; 0 unknown
};

// What a capture wrote, as the probe saw it (since 1.15).
enum class CaptureWrites : uint8_t {
  // Only memory the capture allocated: no tensor the program held when it began changed (parameters, buffers,
  // gradients, optimizer state, the tensors its code reached), no optimizer stepped, no module state was replaced.
  kOwnMemory = 0,
  kProgramMemory = 1,  // also memory the program held before the capture
};
inline constexpr uint8_t kMaxCaptureWrites = 1;
absl::string_view CaptureWritesName(CaptureWrites writes);  // "own-memory", "program-memory"

// Right after a capture-end event: the tensors the probe can name for the graph just captured (since 1.10).
struct GraphTensors {
  ProbeHeader at;
  uint64_t graph = 0;
  uint64_t pool = 0;
  uint64_t host_values = 0;   // the host values it baked in that the probe watches
  uint64_t modules = 0;       // the modules whose forward ran inside the capture
  absl::string_view tensors;  // as trace::ParseNamedTensors reads them
  // Since 1.15, for the program's own captures; none: not known (older probes, captures made by libraries).
  std::optional<CaptureWrites> writes;
};

// A replay runs while modules whose forward reads their training flag are in another mode than at capture (1.10).
struct TrainingModeChange {
  ProbeHeader at;
  uint64_t graph = 0;
  bool captured_training = false;  // those modules were captured in training mode
  uint64_t modules = 0;            // how many differ
  absl::string_view names;         // the first few, comma-separated
};

// Where a host draw inside a capture came from (since 1.10).
enum class DrawSource : uint8_t {
  kPythonRandom = 0,
  kNumpy = 1,
  kTorchCpu = 2,
  kClock = 3,
  kOsUrandom = 4,
  kIterator = 5,  // next() of an iterator the program keeps (itertools.cycle, a data iterator): the item taken
};
inline constexpr uint8_t kMaxDrawSource = 5;
// "python-random", "numpy", "torch-cpu", "clock", "os-urandom", "iterator"
absl::string_view DrawSourceName(DrawSource source);

// A random number was drawn on the host inside a capture (since 1.10). The stack is the draw's when the probe saw the
// call, else the capture's end.
struct HostRandomDraw {
  ProbeHeader at;
  uint64_t graph = 0;
  DrawSource source = DrawSource::kPythonRandom;
  absl::string_view call;  // "random.random"
};

// Before a graphed backward replays, parameters' .grad tensors live in its graphs' pool (since 1.10). The stack is
// the program's call that ran the backward.
struct GradAliased {
  ProbeHeader at;
  uint64_t module = 0;  // the graphed module's id
  uint64_t count = 0;
  uint64_t first_address = 0;
  absl::string_view names;  // the first few, comma-separated
};

// The program dropped its last Python reference to a tensor a graph reads (since 1.10). The stack is the line that
// dropped it.
struct TensorReleased {
  ProbeHeader at;
  uint64_t graph = 0;
  TensorRole role = TensorRole::kParameter;
  absl::string_view name;
  uint64_t address = 0;
};

// One of the program's outermost module calls, outside captures, under --plan (since 1.11): its begin and end paired.
struct ModuleCallRecord {
  ProbeHeader at;  // the begin's: the stack is the program's call
  uint64_t module = 0;
  uint64_t number = 0;
  uint64_t end_ns = 0;
  // The module's class, then one "name=shape" per tensor input, tab-separated ("Linear\t0=32x128").
  absl::string_view call_text;
  // Since 1.13: the nested calls the probe's hooks saw and what the hooks added to each; 0 from older probes.
  uint64_t hooked_calls = 0;
  uint64_t hook_ns_each = 0;
};

// What kind of state the program keeps across steps a capture made (since 1.12).
enum class MadeStateRole : uint8_t {
  kParameter = 0,       // the captured code replaced a module's parameter
  kBuffer = 1,          // ... or buffer (`self.ema = self.ema * 0.9 + ...`)
  kOptimizerState = 2,  // an optimizer's first step inside the capture created its state
};
inline constexpr uint8_t kMaxMadeStateRole = 2;
absl::string_view MadeStateRoleName(MadeStateRole role);  // "parameter", "buffer", "optimizer-state"

// At a capture's end: state the program keeps across steps was made inside the capture (since 1.12).
struct StateMadeInCapture {
  ProbeHeader at;
  uint64_t graph = 0;
  MadeStateRole role = MadeStateRole::kParameter;
  absl::string_view names;      // its name; kOptimizerState: the first few, comma-separated
  uint64_t address_before = 0;  // parameter, buffer: the address it had before
  uint64_t address_now = 0;     // the (first) address now
  uint64_t bytes = 0;           // parameter, buffer: its bytes
  uint64_t tensors = 0;         // kOptimizerState: how many tensors
};

// The call at which the probe marked a pass of the program's loop.
enum class StepAnchor : uint8_t {
  kOptimizerStep = 0,  // an optimizer.step() outside captures (traces recorded before anchors were named send none)
  kReplay = 1,         // a graph replay, before any optimizer step
};
inline constexpr uint8_t kMaxStepAnchor = 1;
absl::string_view StepAnchorName(StepAnchor anchor);  // "optimizer-step", "replay"

// A pass of the program's own loop begins: its steps are cut here (since 1.14; analysis/iterations.h).
struct ProgramStep {
  ProbeHeader at;
  uint64_t phase = 0;      // from 1: another loop, or the same loop in another call of its function, is another
  absl::string_view loop;  // where the loop is ("train.py:30 in main")
  StepAnchor anchor = StepAnchor::kOptimizerStep;
};

// Every probe event of a trace, decoded once, each kind in trace order. An event whose fields its kind does not allow
// (an unknown role, a flag neither 0 nor 1) is left out and counted, with the first reason.
struct ProbeRecords {
  std::vector<CaptureBegin> capture_begins;
  std::vector<CaptureEnd> capture_ends;
  std::vector<PythonExceptionRecord> exceptions;
  std::vector<CompileSkip> compile_skips;
  std::vector<OutputsInvalidated> outputs_invalidated;
  std::vector<StateRebound> state_rebound;
  std::vector<OutputsHeld> outputs_held;
  std::vector<DdpConstructed> ddp_constructed;
  std::vector<DdpCapturedForward> ddp_captured_forwards;
  std::vector<HostValueChange> host_value_changes;
  std::vector<InputShapeChange> input_shape_changes;
  std::vector<ProbeMark> audits;
  std::vector<ShadowSkipped> shadow_skipped;
  std::vector<ProbeMark> waits;
  std::vector<GraphAlive> graphs_alive;
  std::vector<MegatronGraphRecorded> megatron_graphs_recorded;
  std::vector<GraphTensors> graph_tensors;
  std::vector<TrainingModeChange> training_mode_changes;
  std::vector<HostRandomDraw> host_random_draws;
  std::vector<GradAliased> grads_aliased;
  std::vector<TensorReleased> tensors_released;
  std::vector<ModuleCallRecord> module_calls;  // a begin without its end is left out
  std::vector<ProbeMark> backwards;
  std::vector<StateMadeInCapture> state_made_in_capture;
  std::vector<ProgramStep> program_steps;

  size_t invalid = 0;
  std::string first_invalid;  // "event 12 (host-value-changed): unknown role \"foo\""

  // The first capture-begin of Python graph `graph`, null when none.
  const CaptureBegin* FirstCaptureBeginOf(uint64_t graph) const;
};

ProbeRecords DecodeProbeRecords(const Trace& trace);

}  // namespace graphcheck::trace

#endif  // GRAPHCHECK_TRACE_PROBE_RECORDS_H_
