#include "trace/probe_records.h"

#include <algorithm>
#include <array>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"

namespace graphcheck::trace {
namespace {

// The wire names of an enum whose values run from 0, in order. probe_abi_test.py reads these tables.
constexpr std::array<absl::string_view, kMaxTensorRole + 1> kTensorRoles = {"parameter", "buffer", "static-input",
                                                                            "optimizer-state"};
constexpr std::array<absl::string_view, kMaxHostValueRole + 1> kHostValueRoles = {"optimizer-hyperparameter",
                                                                                  "module-attribute",
                                                                                  "grad",
                                                                                  "global",
                                                                                  "closure",
                                                                                  "attribute",
                                                                                  "entry",
                                                                                  "requires-grad",
                                                                                  "grad-mode",
                                                                                  "autocast",
                                                                                  "optimizer-param-groups"};
constexpr std::array<absl::string_view, kMaxShapeChangeHandling + 1> kShapeChangeHandlings = {"raised", "broadcast",
                                                                                              "converted"};
constexpr std::array<absl::string_view, kMaxDrawSource + 1> kDrawSources = {"python-random", "numpy",      "torch-cpu",
                                                                            "clock",         "os-urandom", "iterator"};
constexpr std::array<absl::string_view, kMaxMadeStateRole + 1> kMadeStateRoles = {"parameter", "buffer",
                                                                                  "optimizer-state"};
constexpr std::array<absl::string_view, kMaxStepAnchor + 1> kStepAnchors = {"optimizer-step", "replay"};
constexpr std::array<absl::string_view, kMaxCaptureWrites + 1> kCaptureWrites = {"own-memory", "program-memory"};

template <typename Enum, size_t N>
absl::string_view NameOf(const std::array<absl::string_view, N>& names, Enum value) {
  const size_t index = static_cast<size_t>(value);
  return index < N ? names[index] : absl::string_view("unknown");
}

template <typename Enum, size_t N>
std::optional<Enum> Parse(const std::array<absl::string_view, N>& names, absl::string_view name) {
  auto it = std::find(names.begin(), names.end(), name);
  if (it == names.end()) return std::nullopt;
  return static_cast<Enum>(it - names.begin());
}

// Decodes one trace's events, recording the first reason an event was left out.
class Decoder {
 public:
  explicit Decoder(const Trace& trace) : trace_(trace) {}

  ProbeRecords Run() {
    absl::flat_hash_map<uint64_t, size_t> module_call_begins;  // call number -> event
    for (size_t i = 0; i < trace_.probe_events.size(); ++i) {
      index_ = i;
      const ProbeEvent& e = trace_.probe_events[i];
      if (e.kind == ProbeEventKind::kModuleCallBegin) {
        module_call_begins[e.value] = i;
      } else if (e.kind == ProbeEventKind::kModuleCallEnd) {
        auto begin = module_call_begins.find(e.value);
        if (begin != module_call_begins.end()) {
          AddModuleCall(trace_.probe_events[begin->second], begin->second, e);
          module_call_begins.erase(begin);
        }
      } else {
        Add(e);
      }
    }
    return std::move(records_);
  }

 private:
  ProbeHeader Header(const ProbeEvent& e) const { return {index_, e.thread_id, e.time_ns, e.stack, e.origin}; }
  absl::string_view Text(StringId id) const { return trace_.String(id); }

  bool Invalid(const ProbeEvent& e, absl::string_view why) {
    if (records_.invalid++ == 0) {
      records_.first_invalid = absl::StrCat("event ", index_, " (", ProbeEventKindName(e.kind), "): ", why);
    }
    return false;
  }
  // A field the probe sends as 0 or 1.
  bool Flag(const ProbeEvent& e, uint64_t field, absl::string_view name, bool* out) {
    if (field > 1) return Invalid(e, absl::StrCat(name, " is ", field, ", not 0 or 1"));
    *out = field == 1;
    return true;
  }
  template <typename Enum, size_t N>
  bool Role(const ProbeEvent& e, const std::array<absl::string_view, N>& names, Enum* out) {
    const std::optional<Enum> role = Parse<Enum>(names, Text(e.type));
    if (!role) return Invalid(e, absl::StrCat("unknown role \"", Text(e.type), "\""));
    *out = *role;
    return true;
  }
  void Add(const ProbeEvent& e);
  void AddCaptureBegin(const ProbeEvent& e, const ProbeHeader& at);
  void AddStateRebound(const ProbeEvent& e, const ProbeHeader& at);
  void AddDdpConstructed(const ProbeEvent& e, const ProbeHeader& at);
  void AddDdpCapturedForward(const ProbeEvent& e, const ProbeHeader& at);
  void AddInputShapeChange(const ProbeEvent& e, const ProbeHeader& at);
  void AddTrainingModeChange(const ProbeEvent& e, const ProbeHeader& at);
  void AddHostRandomDraw(const ProbeEvent& e, const ProbeHeader& at);
  void AddTensorReleased(const ProbeEvent& e, const ProbeHeader& at);
  void AddStateMadeInCapture(const ProbeEvent& e, const ProbeHeader& at);
  void AddProgramStep(const ProbeEvent& e, const ProbeHeader& at);
  void AddGraphTensors(const ProbeEvent& e, const ProbeHeader& at);
  void AddHostValueChange(const ProbeEvent& e, const ProbeHeader& at);
  void AddModuleCall(const ProbeEvent& begin, size_t begin_index, const ProbeEvent& end);

  const Trace& trace_;
  size_t index_ = 0;
  ProbeRecords records_;
};

void Decoder::Add(const ProbeEvent& e) {
  const ProbeHeader at = Header(e);
  switch (e.kind) {
    case ProbeEventKind::kCaptureBegin:
      return AddCaptureBegin(e, at);
    case ProbeEventKind::kCaptureEnd:
      records_.capture_ends.push_back({at, e.graph, e.pool, e.value, e.value_now});
      return;
    case ProbeEventKind::kCaptureException:
    case ProbeEventKind::kUncaughtException:
      records_.exceptions.push_back(
          {at, e.kind == ProbeEventKind::kCaptureException, e.graph, Text(e.type), Text(e.text)});
      return;
    case ProbeEventKind::kCompileSkip:
      records_.compile_skips.push_back({at, Text(e.text)});
      return;
    case ProbeEventKind::kOutputsInvalidated:
      records_.outputs_invalidated.push_back({at, e.value});
      return;
    case ProbeEventKind::kStateRebound:
      return AddStateRebound(e, at);
    case ProbeEventKind::kOutputsHeld:
      records_.outputs_held.push_back({at, e.graph, Text(e.text), e.value, e.pool, e.value_now});
      return;
    case ProbeEventKind::kDdpConstructed:
      return AddDdpConstructed(e, at);
    case ProbeEventKind::kDdpCapturedForward:
      return AddDdpCapturedForward(e, at);
    case ProbeEventKind::kHostValueChanged:
      return AddHostValueChange(e, at);
    case ProbeEventKind::kInputShapeChanged:
      return AddInputShapeChange(e, at);
    case ProbeEventKind::kAuditBegin:
    case ProbeEventKind::kAuditEnd:
      records_.audits.push_back({at, e.kind == ProbeEventKind::kAuditBegin, e.graph, 0, {}});
      return;
    case ProbeEventKind::kShadowSkipped:
      records_.shadow_skipped.push_back({at, e.graph, Text(e.type), Text(e.text)});
      return;
    case ProbeEventKind::kWaitBegin:
    case ProbeEventKind::kWaitEnd:
      records_.waits.push_back({at, e.kind == ProbeEventKind::kWaitBegin, 0, 0, Text(e.text)});
      return;
    case ProbeEventKind::kGraphAlive:
      records_.graphs_alive.push_back({at, e.graph});
      return;
    case ProbeEventKind::kMegatronGraphRecorded:
      records_.megatron_graphs_recorded.push_back({at, e.value <= UINT32_MAX ? static_cast<uint32_t>(e.value) : 0});
      return;
    case ProbeEventKind::kGraphTensors:
      return AddGraphTensors(e, at);
    case ProbeEventKind::kTrainingModeChanged:
      return AddTrainingModeChange(e, at);
    case ProbeEventKind::kHostRandomDraw:
      return AddHostRandomDraw(e, at);
    case ProbeEventKind::kGradAliased:
      records_.grads_aliased.push_back({at, e.graph, e.value, e.value_now, Text(e.text)});
      return;
    case ProbeEventKind::kTensorReleased:
      return AddTensorReleased(e, at);
    case ProbeEventKind::kBackwardBegin:
    case ProbeEventKind::kBackwardEnd:
      records_.backwards.push_back({at, e.kind == ProbeEventKind::kBackwardBegin, 0, e.value, {}});
      return;
    case ProbeEventKind::kStateMadeInCapture:
      return AddStateMadeInCapture(e, at);
    case ProbeEventKind::kProgramStep:
      return AddProgramStep(e, at);
    case ProbeEventKind::kModuleCallBegin:
    case ProbeEventKind::kModuleCallEnd:
      return;  // paired in Run()
  }
}

void Decoder::AddCaptureBegin(const ProbeEvent& e, const ProbeHeader& at) {
  CaptureBegin r;
  r.at = at;
  r.graph = e.graph;
  r.error_mode = Text(e.type);
  if (e.origin == ProbeOrigin::kCudagraphTrees) r.compiled_function = e.value;
  if (e.origin == ProbeOrigin::kMegatron) r.megatron_layer = e.value <= UINT32_MAX ? e.value : 0;
  if (e.origin == ProbeOrigin::kMegatron || e.origin == ProbeOrigin::kMegatronFullIteration) {
    r.megatron_part = Text(e.text);
  }
  records_.capture_begins.push_back(r);
}

void Decoder::AddStateRebound(const ProbeEvent& e, const ProbeHeader& at) {
  StateRebound r;
  r.at = at;
  r.graph = e.graph;
  r.name = Text(e.text);
  r.address_at_capture = e.value;
  r.address_now = e.value_now;
  if (Role(e, kTensorRoles, &r.role) && Flag(e, e.pool, "freed", &r.freed)) records_.state_rebound.push_back(r);
}

void Decoder::AddDdpConstructed(const ProbeEvent& e, const ProbeHeader& at) {
  DdpConstructed r;
  r.at = at;
  r.module = e.graph;
  if (Flag(e, e.value, "on the default stream", &r.on_default_stream)) records_.ddp_constructed.push_back(r);
}

void Decoder::AddDdpCapturedForward(const ProbeEvent& e, const ProbeHeader& at) {
  DdpCapturedForward r;
  r.at = at;
  r.module = e.graph;
  r.forwards = e.value;
  r.static_graph = Text(e.text) == "static_graph";
  if (Flag(e, e.value_now, "rebuilt buckets", &r.rebuilt_buckets)) records_.ddp_captured_forwards.push_back(r);
}

void Decoder::AddInputShapeChange(const ProbeEvent& e, const ProbeHeader& at) {
  InputShapeChange r;
  r.at = at;
  r.graph = e.graph;
  if (e.value != 0xffffffff) {
    if (e.value > UINT32_MAX) return void(Invalid(e, "input index out of range"));
    r.input = static_cast<uint32_t>(e.value);
  }
  const absl::string_view text = Text(e.text);
  const size_t newline = text.find('\n');
  r.description = text.substr(0, newline);
  if (newline != absl::string_view::npos) r.error = text.substr(newline + 1);
  if (Role(e, kShapeChangeHandlings, &r.handling)) records_.input_shape_changes.push_back(r);
}

void Decoder::AddTrainingModeChange(const ProbeEvent& e, const ProbeHeader& at) {
  TrainingModeChange r;
  r.at = at;
  r.graph = e.graph;
  r.modules = e.value_now;
  r.names = Text(e.text);
  if (Flag(e, e.value, "captured in training", &r.captured_training)) records_.training_mode_changes.push_back(r);
}

void Decoder::AddHostRandomDraw(const ProbeEvent& e, const ProbeHeader& at) {
  HostRandomDraw r;
  r.at = at;
  r.graph = e.graph;
  r.call = Text(e.text);
  if (Role(e, kDrawSources, &r.source)) records_.host_random_draws.push_back(r);
}

void Decoder::AddTensorReleased(const ProbeEvent& e, const ProbeHeader& at) {
  TensorReleased r;
  r.at = at;
  r.graph = e.graph;
  r.name = Text(e.text);
  r.address = e.value;
  if (Role(e, kTensorRoles, &r.role)) records_.tensors_released.push_back(r);
}

void Decoder::AddProgramStep(const ProbeEvent& e, const ProbeHeader& at) {
  ProgramStep r;
  r.at = at;
  r.phase = e.value;
  r.loop = Text(e.text);
  // Marks recorded before anchors were named send none: each was an optimizer step's.
  if (Text(e.type).empty() || Role(e, kStepAnchors, &r.anchor)) records_.program_steps.push_back(r);
}

void Decoder::AddGraphTensors(const ProbeEvent& e, const ProbeHeader& at) {
  GraphTensors r{at, e.graph, e.pool, e.value, e.value_now, Text(e.text), std::nullopt};
  if (!Text(e.type).empty()) {  // probes before 1.15 send none
    CaptureWrites writes;
    if (!Role(e, kCaptureWrites, &writes)) return;
    r.writes = writes;
  }
  records_.graph_tensors.push_back(r);
}

void Decoder::AddStateMadeInCapture(const ProbeEvent& e, const ProbeHeader& at) {
  StateMadeInCapture r;
  r.at = at;
  r.graph = e.graph;
  r.names = Text(e.text);
  r.address_now = e.value_now;
  if (!Role(e, kMadeStateRoles, &r.role)) return;
  if (r.role == MadeStateRole::kOptimizerState) {
    r.tensors = e.pool;
  } else {
    r.address_before = e.value;
    r.bytes = e.pool;
  }
  records_.state_made_in_capture.push_back(r);
}

void Decoder::AddHostValueChange(const ProbeEvent& e, const ProbeHeader& at) {
  HostValueChange r;
  r.at = at;
  r.graph = e.graph;
  if (!Role(e, kHostValueRoles, &r.role) || !Flag(e, e.pool, "at the change", &r.at_change)) return;
  // The name, then (for the captured code's own reads) a line saying where it was read.
  const absl::string_view text = Text(e.text);
  const size_t newline = text.find('\n');
  r.name = text.substr(0, newline);
  if (newline != absl::string_view::npos) r.read_at = text.substr(newline + 1);
  if (r.role == HostValueRole::kGrad) {
    r.grad_at_capture = e.value;
    r.grad_now = e.value_now;
  } else {
    r.captured = HostValueNumber(e.value);
    r.now = HostValueNumber(e.value_now);
  }
  records_.host_value_changes.push_back(r);
}

void Decoder::AddModuleCall(const ProbeEvent& begin, size_t begin_index, const ProbeEvent& end) {
  if (begin.graph != end.graph || end.time_ns < begin.time_ns) return;
  ModuleCallRecord r;
  r.at = {begin_index, begin.thread_id, begin.time_ns, begin.stack, begin.origin};
  r.module = begin.graph;
  r.number = begin.value;
  r.end_ns = end.time_ns;
  r.call_text = Text(end.text);
  // Bounded by what a call could make, so that a damaged event cannot wrap the time.
  if (end.pool < (uint64_t{1} << 32) && end.value_now < (uint64_t{1} << 32)) {
    r.hooked_calls = end.pool;
    r.hook_ns_each = end.value_now;
  }
  records_.module_calls.push_back(r);
}

}  // namespace

absl::string_view TensorRoleName(TensorRole role) { return NameOf(kTensorRoles, role); }
absl::string_view HostValueRoleName(HostValueRole role) { return NameOf(kHostValueRoles, role); }
absl::string_view ShapeChangeHandlingName(ShapeChangeHandling handling) {
  return NameOf(kShapeChangeHandlings, handling);
}
absl::string_view DrawSourceName(DrawSource source) { return NameOf(kDrawSources, source); }

absl::string_view CaptureWritesName(CaptureWrites writes) { return NameOf(kCaptureWrites, writes); }

absl::string_view AutocastStateName(double state) {
  if (state == 0) return "off";
  if (state == 2) return "on in float16";
  if (state == 3) return "on in bfloat16";
  if (state == 4) return "on in float32";
  return "on";
}
absl::string_view MadeStateRoleName(MadeStateRole role) { return NameOf(kMadeStateRoles, role); }
absl::string_view StepAnchorName(StepAnchor anchor) { return NameOf(kStepAnchors, anchor); }

const CaptureBegin* ProbeRecords::FirstCaptureBeginOf(uint64_t graph) const {
  for (const CaptureBegin& begin : capture_begins) {
    if (begin.graph == graph) return &begin;
  }
  return nullptr;
}

ProbeRecords DecodeProbeRecords(const Trace& trace) { return Decoder(trace).Run(); }

}  // namespace graphcheck::trace
