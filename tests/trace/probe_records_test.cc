#include "trace/probe_records.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>

namespace graphcheck::trace {
namespace {

using ::testing::SizeIs;

uint64_t Bits(double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

class ProbeRecordsTest : public ::testing::Test {
 protected:
  ProbeEvent& Add(ProbeEventKind kind, absl::string_view type = "", absl::string_view text = "") {
    ProbeEvent& e = trace_.probe_events.emplace_back();
    e.kind = kind;
    e.time_ns = 1000 * trace_.probe_events.size();
    e.thread_id = 7;
    e.type = trace_.Intern(type);
    e.text = trace_.Intern(text);
    return e;
  }
  Trace trace_;
};

TEST_F(ProbeRecordsTest, HostValueChangesCarryNumbersOrAddressesByRole) {
  ProbeEvent& global = Add(ProbeEventKind::kHostValueChanged, "global", "SCALE\ntrain.py:12 in step");
  global.graph = 5;
  global.value = Bits(0.5);
  global.value_now = Bits(0.25);
  global.pool = 1;
  ProbeEvent& grad = Add(ProbeEventKind::kHostValueChanged, "grad", "model.fc.weight");
  grad.value = 0x7000;
  grad.value_now = 0;

  const ProbeRecords records = DecodeProbeRecords(trace_);

  ASSERT_THAT(records.host_value_changes, SizeIs(2));
  const HostValueChange& first = records.host_value_changes[0];
  EXPECT_EQ(first.role, HostValueRole::kGlobal);
  EXPECT_EQ(first.name, "SCALE");
  EXPECT_EQ(first.read_at, "train.py:12 in step");
  EXPECT_EQ(first.captured, 0.5);
  EXPECT_EQ(first.now, 0.25);
  EXPECT_TRUE(first.at_change);
  EXPECT_EQ(first.graph, 5u);
  EXPECT_EQ(first.at.event, 0u);
  EXPECT_EQ(first.at.thread_id, 7u);
  const HostValueChange& second = records.host_value_changes[1];
  EXPECT_EQ(second.role, HostValueRole::kGrad);
  EXPECT_EQ(second.grad_at_capture, 0x7000u);
  EXPECT_EQ(second.grad_now, 0u);
  EXPECT_EQ(second.captured, 0);
  EXPECT_FALSE(second.at_change);
  EXPECT_EQ(records.invalid, 0u);
}

TEST_F(ProbeRecordsTest, AnEventItsKindDoesNotAllowIsLeftOutAndCounted) {
  Add(ProbeEventKind::kHostValueChanged, "no-such-role", "x");
  Add(ProbeEventKind::kStateRebound, "parameter", "w").pool = 2;  // a flag neither 0 nor 1
  Add(ProbeEventKind::kHostRandomDraw, "os-urandom", "os.urandom");

  const ProbeRecords records = DecodeProbeRecords(trace_);

  EXPECT_THAT(records.host_value_changes, SizeIs(0));
  EXPECT_THAT(records.state_rebound, SizeIs(0));
  ASSERT_THAT(records.host_random_draws, SizeIs(1));
  EXPECT_EQ(records.host_random_draws[0].source, DrawSource::kOsUrandom);
  EXPECT_EQ(records.invalid, 2u);
  EXPECT_EQ(records.first_invalid, "event 0 (host-value-changed): unknown role \"no-such-role\"");
}

TEST_F(ProbeRecordsTest, ProgramStepsNameTheirAnchorAndOldOnesWereOptimizerSteps) {
  Add(ProbeEventKind::kProgramStep, "", "train.py:3 in main").value = 1;  // recorded before anchors were named
  Add(ProbeEventKind::kProgramStep, "replay", "serve.py:9 in main").value = 2;
  Add(ProbeEventKind::kProgramStep, "optimizer-step", "train.py:3 in main").value = 3;
  Add(ProbeEventKind::kProgramStep, "forward", "x.py:1 in f");

  const ProbeRecords records = DecodeProbeRecords(trace_);

  ASSERT_THAT(records.program_steps, SizeIs(3));
  EXPECT_EQ(records.program_steps[0].anchor, StepAnchor::kOptimizerStep);
  EXPECT_EQ(records.program_steps[1].anchor, StepAnchor::kReplay);
  EXPECT_EQ(records.program_steps[1].phase, 2u);
  EXPECT_EQ(records.program_steps[1].loop, "serve.py:9 in main");
  EXPECT_EQ(records.program_steps[2].anchor, StepAnchor::kOptimizerStep);
  EXPECT_EQ(StepAnchorName(StepAnchor::kReplay), "replay");
  EXPECT_EQ(records.first_invalid, "event 3 (program-step): unknown role \"forward\"");
}

TEST_F(ProbeRecordsTest, GraphTensorsSayWhatTheCaptureWroteWhenTheProbeKnows) {
  Add(ProbeEventKind::kGraphTensors, "", "pool\t\t7f00\t100").graph = 1;  // before 1.15, or a library's capture
  Add(ProbeEventKind::kGraphTensors, "own-memory").graph = 2;
  Add(ProbeEventKind::kGraphTensors, "program-memory").graph = 3;
  Add(ProbeEventKind::kGraphTensors, "all-memory").graph = 4;

  const ProbeRecords records = DecodeProbeRecords(trace_);

  ASSERT_THAT(records.graph_tensors, SizeIs(3));
  EXPECT_EQ(records.graph_tensors[0].writes, std::nullopt);
  EXPECT_EQ(records.graph_tensors[0].tensors, "pool\t\t7f00\t100");
  EXPECT_EQ(records.graph_tensors[1].writes, CaptureWrites::kOwnMemory);
  EXPECT_EQ(records.graph_tensors[2].writes, CaptureWrites::kProgramMemory);
  EXPECT_EQ(CaptureWritesName(CaptureWrites::kOwnMemory), "own-memory");
  EXPECT_EQ(records.first_invalid, "event 3 (graph-tensors): unknown role \"all-memory\"");
}

TEST_F(ProbeRecordsTest, ShapeChangesSplitTheErrorAndKnowAnotherInputCount) {
  ProbeEvent& raised = Add(ProbeEventKind::kInputShapeChanged, "raised",
                           "input 0: 8x64 float32, captured 32x64 float32\nRuntimeError: shapes differ");
  raised.value = 0;
  Add(ProbeEventKind::kInputShapeChanged, "broadcast", "3 inputs, captured with 2").value = 0xffffffff;

  const ProbeRecords records = DecodeProbeRecords(trace_);

  ASSERT_THAT(records.input_shape_changes, SizeIs(2));
  EXPECT_EQ(records.input_shape_changes[0].handling, ShapeChangeHandling::kRaised);
  EXPECT_EQ(records.input_shape_changes[0].input, 0u);
  EXPECT_EQ(records.input_shape_changes[0].description, "input 0: 8x64 float32, captured 32x64 float32");
  EXPECT_EQ(records.input_shape_changes[0].error, "RuntimeError: shapes differ");
  EXPECT_FALSE(records.input_shape_changes[1].input.has_value());
  EXPECT_EQ(records.input_shape_changes[1].error, "");
}

TEST_F(ProbeRecordsTest, ModuleCallsArePairedByNumberAndStateMadeByRole) {
  ProbeEvent& begin = Add(ProbeEventKind::kModuleCallBegin);
  begin.graph = 9;
  begin.value = 1;
  begin.stack = 3;
  Add(ProbeEventKind::kModuleCallBegin).value = 2;  // never ends: left out
  ProbeEvent& end = Add(ProbeEventKind::kModuleCallEnd, "", "Linear\t0=32x128");
  end.graph = 9;
  end.value = 1;
  end.pool = 4;
  end.value_now = 250;
  ProbeEvent& optimizer = Add(ProbeEventKind::kStateMadeInCapture, "optimizer-state", "Adam exp_avg of w");
  optimizer.pool = 6;
  optimizer.value_now = 0x9000;
  ProbeEvent& buffer = Add(ProbeEventKind::kStateMadeInCapture, "buffer", "model.ema");
  buffer.value = 0x1000;
  buffer.pool = 512;

  const ProbeRecords records = DecodeProbeRecords(trace_);

  ASSERT_THAT(records.module_calls, SizeIs(1));
  EXPECT_EQ(records.module_calls[0].module, 9u);
  EXPECT_EQ(records.module_calls[0].at.stack, 3u);
  EXPECT_EQ(records.module_calls[0].end_ns, 3000u);  // the third event's time
  EXPECT_EQ(records.module_calls[0].call_text, "Linear\t0=32x128");
  EXPECT_EQ(records.module_calls[0].hooked_calls * records.module_calls[0].hook_ns_each, 1000u);
  ASSERT_THAT(records.state_made_in_capture, SizeIs(2));
  EXPECT_EQ(records.state_made_in_capture[0].tensors, 6u);
  EXPECT_EQ(records.state_made_in_capture[0].bytes, 0u);
  EXPECT_EQ(records.state_made_in_capture[1].role, MadeStateRole::kBuffer);
  EXPECT_EQ(records.state_made_in_capture[1].address_before, 0x1000u);
  EXPECT_EQ(records.state_made_in_capture[1].bytes, 512u);
}

TEST_F(ProbeRecordsTest, CaptureBeginsNameWhatTheirOriginSent) {
  ProbeEvent& trees = Add(ProbeEventKind::kCaptureBegin, "thread_local");
  trees.origin = ProbeOrigin::kCudagraphTrees;
  trees.value = 41;
  trees.graph = 1;
  ProbeEvent& layer = Add(ProbeEventKind::kCaptureBegin, "global", "forward");
  layer.origin = ProbeOrigin::kMegatron;
  layer.value = 3;
  layer.graph = 2;

  const ProbeRecords records = DecodeProbeRecords(trace_);

  ASSERT_THAT(records.capture_begins, SizeIs(2));
  EXPECT_EQ(records.capture_begins[0].compiled_function, 41u);
  EXPECT_EQ(records.capture_begins[0].megatron_layer, 0u);
  EXPECT_EQ(records.capture_begins[0].error_mode, "thread_local");
  EXPECT_EQ(records.capture_begins[1].megatron_layer, 3u);
  EXPECT_EQ(records.capture_begins[1].megatron_part, "forward");
  EXPECT_EQ(records.FirstCaptureBeginOf(2), &records.capture_begins[1]);
  EXPECT_EQ(records.FirstCaptureBeginOf(3), nullptr);
}

}  // namespace
}  // namespace graphcheck::trace
