// The capture contract's checks over the Python probe's events and the recorder's graph manifests:
// grad-aliases-graph, training-mode-frozen, graph-reads-freed, state-made-in-capture, graph-contract, and
// address-drift's and host-value-frozen's findings on graphs other than make_graphed_callables' (rng-host-draw:
// rng_host_draw_test.cc).
// Each planted defect is flagged at the line its event carries; each clean case (no event, no replay after the change,
// memory of the graph's own pool, a block still allocated) is left alone.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "analysis/graph_contract.h"
#include "analyzers/checks.h"
#include "tests/analyzers/contract_test_util.h"

namespace graphcheck::testing_trace {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

TEST(GradAliasesGraphTest, AGradInTheGraphsPoolIsReportedAtTheBackward) {
  TraceBuilder b;
  Capture(b, ProbeOrigin::kGraphedCallables);
  trace::ProbeEvent& e = b.Probe(5000, 1, ProbeEventKind::kGradAliased, kGraph, ProbeOrigin::kGraphedCallables);
  e.value = 2;
  e.value_now = kPoolSegment + 0x200;
  e.text = b.Intern("0.weight, 0.bias");
  e.stack = TrainPyStack(b, 44);
  const std::vector<Finding> findings = Findings(analyzers::NewGradAliasesGraphCheck(), b);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].severity, Severity::kError);
  EXPECT_THAT(findings[0].message, HasSubstr("the .grad of 2 parameters: 0.weight, 0.bias are memory of the graphs"));
  EXPECT_THAT(findings[0].fix, HasSubstr("p.grad = torch.zeros_like(p) before torch.cuda.make_graphed_callables"));
  EXPECT_EQ(FirstUserFrame(findings[0].where)->line, 44u);
}

TEST(GradAliasesGraphTest, NoEventNoFinding) {
  TraceBuilder b;
  Capture(b, ProbeOrigin::kGraphedCallables);
  b.Replay(5000, 1, kStream, kCudaGraph, 10, 100);
  EXPECT_THAT(Findings(analyzers::NewGradAliasesGraphCheck(), b), IsEmpty());
}

TEST(TrainingModeFrozenTest, AReplayInEvalOfATrainingCaptureIsReported) {
  TraceBuilder b;
  Capture(b);
  trace::ProbeEvent& e = b.Probe(5000, 1, ProbeEventKind::kTrainingModeChanged, kGraph, ProbeOrigin::kUser);
  e.value = 1;
  e.value_now = 2;
  e.text = b.Intern("model.drop, model.norm");
  e.stack = TrainPyStack(b, 61);
  b.Replay(5100, 1, kStream, kCudaGraph, 10, 100);
  const std::vector<Finding> findings = Findings(analyzers::NewTrainingModeFrozenCheck(), b);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].message, HasSubstr("runs with 2 modules in eval mode that the capture recorded in training"));
  EXPECT_THAT(findings[0].evidence[0], HasSubstr("model.drop, model.norm"));
  EXPECT_EQ(FirstUserFrame(findings[0].where)->line, 61u);
}

TEST(TrainingModeFrozenTest, MegatronsLayerGraphIsNamed) {
  TraceBuilder b;
  trace::ProbeEvent& begin = b.Probe(900, 1, ProbeEventKind::kCaptureBegin, kGraph, ProbeOrigin::kMegatron);
  begin.value = 2;
  begin.text = b.Intern("forward");
  trace::ProbeEvent& e = b.Probe(5000, 1, ProbeEventKind::kTrainingModeChanged, kGraph, ProbeOrigin::kMegatron);
  e.value = 1;
  e.value_now = 1;
  e.text = b.Intern("module.decoder.layers.1.self_attention.core_attention.attention_dropout");
  const std::vector<Finding> findings = Findings(analyzers::NewTrainingModeFrozenCheck(), b);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].message, HasSubstr("This replay of Megatron's layer 2 forward graph"));
  EXPECT_THAT(findings[0].fix, HasSubstr("PR #6992"));
}

TEST(TrainingModeFrozenTest, NoEventNoFinding) {
  TraceBuilder b;
  Capture(b);
  b.Replay(5100, 1, kStream, kCudaGraph, 10, 100);
  EXPECT_THAT(Findings(analyzers::NewTrainingModeFrozenCheck(), b), IsEmpty());
}

TEST(GraphReadsFreedTest, ANamedBufferFreedIsReportedWhereItWasDropped) {
  TraceBuilder b;
  Capture(b);
  trace::ProbeEvent& released = b.Probe(4000, 1, ProbeEventKind::kTensorReleased, kGraph);
  released.type = b.Intern("buffer");
  released.text = b.Intern("model.buf");
  released.value = kBuffer;
  released.stack = TrainPyStack(b, 33);
  trace::ProbeEvent& rebound = b.Rebound(5000, 1, kGraph, "buffer", "model.buf", kBuffer, 0x7f0000300000);
  rebound.pool = 1;
  rebound.stack = TrainPyStack(b, 35);
  b.Replay(5100, 1, kStream, kCudaGraph, 10, 100);
  const std::vector<Finding> findings = Findings(analyzers::NewGraphReadsFreedCheck(), b);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].message, HasSubstr("The buffer model.buf, which the graph (captured at"));
  EXPECT_THAT(findings[0].message, HasSubstr("was freed when this line dropped it"));
  EXPECT_EQ(FirstUserFrame(findings[0].where)->line, 33u);
  EXPECT_THAT(findings[0].evidence[1], HasSubstr("replayed after it at /home/me/train.py:35"));
}

TEST(GraphReadsFreedTest, AProgramBlockTheManifestNamesFreedThenReplayedIsReported) {
  TraceBuilder b;
  Allocation(b, 100, trace::AllocatorEvent::Action::kAlloc, 0x7f0000500000, 4096);
  Capture(b);
  Allocation(b, 4500, trace::AllocatorEvent::Action::kFree, 0x7f0000500000, 4096);
  b.Replay(5000, 1, kStream, kCudaGraph, 10, 100);
  const std::vector<Finding> findings = Findings(analyzers::NewGraphReadsFreedCheck(), b);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].message, HasSubstr("names address 0x7f0000500000, inside a block of"));
  EXPECT_THAT(findings[0].message, HasSubstr("the graph was launched again after that"));
}

TEST(GraphReadsFreedTest, PoolMemoryABlockStillAllocatedOrNoReplayAfterTheFreeAreLeftAlone) {
  TraceBuilder b;
  Allocation(b, 100, trace::AllocatorEvent::Action::kAlloc, 0x7f0000500000, 4096);
  Allocation(b, 2100, trace::AllocatorEvent::Action::kAlloc, kPoolSegment + 0x100, 512);  // inside the capture
  b.Replay(500, 1, kStream, kCudaGraph, 10, 100);
  Capture(b);
  b.Replay(3800, 1, kStream, kCudaGraph, 10, 100);
  Allocation(b, 4000, trace::AllocatorEvent::Action::kFree, kPoolSegment + 0x100, 512);
  Allocation(b, 9000, trace::AllocatorEvent::Action::kFree, 0x7f0000500000, 4096);  // at teardown
  EXPECT_THAT(Findings(analyzers::NewGraphReadsFreedCheck(), b), IsEmpty());
}

// A state-made-in-capture event for the capture's graph: `type` replaced (or created) at train.py:`line`.
trace::ProbeEvent& StateMade(TraceBuilder& b, const char* type, const char* text, uint64_t before, uint64_t bytes,
                             int line) {
  trace::ProbeEvent& e = b.Probe(3700, 1, ProbeEventKind::kStateMadeInCapture, kGraph);
  e.type = b.Intern(type);
  e.text = b.Intern(text);
  e.value = before;
  e.pool = bytes;
  e.value_now = kPoolSegment + 0x300;
  e.stack = TrainPyStack(b, line);
  return e;
}

TEST(StateMadeInCaptureTest, ABufferReplacedInsideTheCaptureThatTheGraphReadsIsReportedAtItsLine) {
  TraceBuilder b;
  Capture(b);
  StateMade(b, "buffer", "model.buf", kBuffer, 0x400, 52);
  StateMade(b, "buffer", "model.other", kBuffer + 0x400, 0x400, 53);  // not read by the graph: not listed
  b.Replay(5000, 1, kStream, kCudaGraph, 10, 100);
  const std::vector<Finding> findings = Findings(analyzers::NewStateMadeInCaptureCheck(), b);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].severity, Severity::kError);
  EXPECT_THAT(findings[0].message,
              HasSubstr("This line replaces the buffer model.buf inside the capture (captured at"));
  EXPECT_THAT(findings[0].message, HasSubstr("every replay computes it again from the value before the capture"));
  EXPECT_THAT(findings[0].evidence[0], ::testing::EndsWith("read by the graph: buffer model.buf"));
  EXPECT_THAT(findings[0].fix, HasSubstr("self.ema.mul_(0.9)"));
  EXPECT_EQ(FirstUserFrame(findings[0].where)->line, 52u);
}

TEST(StateMadeInCaptureTest, OptimizerStateCreatedByAFirstStepInsideTheCaptureIsReportedAtTheStep) {
  TraceBuilder b;
  Capture(b);
  StateMade(b, "optimizer-state", "Adam exp_avg of model.fc.weight, Adam exp_avg_sq of model.fc.weight", 0, 3, 40);
  const std::vector<Finding> findings = Findings(analyzers::NewStateMadeInCaptureCheck(), b);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].message, HasSubstr("created the optimizer's state there (3 tensors"));
  EXPECT_THAT(findings[0].evidence[0], HasSubstr("Adam exp_avg of model.fc.weight"));
  EXPECT_THAT(findings[0].fix, HasSubstr("optimizer.step() included"));
  EXPECT_EQ(FirstUserFrame(findings[0].where)->line, 40u);
}

TEST(StateMadeInCaptureTest, AReplacedTensorTheGraphDoesNotReadOrNoEventIsLeftAlone) {
  TraceBuilder b;
  Capture(b);
  StateMade(b, "buffer", "model.cache", 0x7f0000900000, 0x400, 52);  // a cache rebuilt from scratch
  b.Replay(5000, 1, kStream, kCudaGraph, 10, 100);
  EXPECT_THAT(Findings(analyzers::NewStateMadeInCaptureCheck(), b), IsEmpty());
  TraceBuilder clean;
  Capture(clean);
  clean.Replay(5000, 1, kStream, kCudaGraph, 10, 100);
  EXPECT_THAT(Findings(analyzers::NewStateMadeInCaptureCheck(), clean), IsEmpty());
}

TEST(GraphContractTest, OneLinePerGraphSaysWhatItNamesAndBakesIn) {
  TraceBuilder b;
  Allocation(b, 100, trace::AllocatorEvent::Action::kAlloc, 0x7f0000500000, 4096);
  Capture(b);
  const trace::Trace trace = b.Build();
  const analysis::TraceAnalysis analysis(trace);
  const std::vector<analysis::GraphContract> contracts = analysis::ReadGraphContracts(analysis);
  ASSERT_THAT(contracts, SizeIs(1));
  EXPECT_EQ(contracts[0].pool_addresses, 1u);
  EXPECT_EQ(contracts[0].program_blocks, 1u);
  EXPECT_EQ(analysis::DescribeContract(trace, contracts[0]),
            "1 kernel, 0 copies, 0 sets; names 1 parameter (256 KiB), 1 buffer (1 KiB), 1 other block of the "
            "program's memory; 1 addresses in graph pools; bakes in 3 host values the probe watches, from 2 modules");
  const std::vector<Finding> findings = RunCheck(*analyzers::NewGraphContractCheck(), trace);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].severity, Severity::kNote);
  EXPECT_THAT(findings[0].evidence[0], HasSubstr("graph 55 (captured at /home/me/train.py"));
}

TEST(GraphContractTest, AGraphWhoseNodesCouldNotBeReadIsNotAudited) {
  TraceBuilder b;
  Capture(b);
  b.trace().graph_manifests[0].unread_nodes = 3;
  b.trace().graph_manifests[0].unread_reason = b.Intern("this driver has no cuFuncGetParamInfo (CUDA 12.4 or later)");
  const std::vector<Finding> findings = Findings(analyzers::NewGraphContractCheck(), b);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].message, HasSubstr("(1 not audited: their nodes could not all be read)"));
  EXPECT_THAT(findings[0].evidence[0],
              HasSubstr("not audited: 3 nodes unread (this driver has no cuFuncGetParamInfo (CUDA 12.4 or later))"));
}

TEST(GraphContractTest, ATraceWithoutManifestsHasNoNote) {
  TraceBuilder b;
  Capture(b);
  b.trace().graph_manifests.clear();
  EXPECT_THAT(Findings(analyzers::NewGraphContractCheck(), b), IsEmpty());
}

TEST(AddressDriftTest, AParameterOfAManualCaptureGivenNewDataIsReported) {
  TraceBuilder b;
  Capture(b);
  trace::ProbeEvent& e = b.Rebound(5000, 1, kGraph, "parameter", "model.fc.weight", kWeight, 0x7f0000900000);
  e.origin = ProbeOrigin::kUser;
  e.stack = TrainPyStack(b, 52);
  const std::vector<Finding> findings = Findings(analyzers::NewAddressDriftCheck(), b);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].message,
              HasSubstr("The parameter model.fc.weight that the graph reads is a new tensor or live in new memory"));
  EXPECT_THAT(findings[0].fix, HasSubstr("p.data.copy_(new) instead of p.data = new"));
  EXPECT_THAT(findings[0].fix, HasSubstr("capture the graph again"));
}

TEST(AddressDriftTest, FreedMemoryIsLeftToGraphReadsFreed) {
  TraceBuilder b;
  Capture(b);
  b.Rebound(5000, 1, kGraph, "buffer", "model.buf", kBuffer, 0x7f0000900000).pool = 1;
  EXPECT_THAT(Findings(analyzers::NewAddressDriftCheck(), b), IsEmpty());
}

TEST(HostValueFrozenTest, AnAttributeOfAModuleInsideAManualCaptureIsReported) {
  TraceBuilder b;
  Capture(b);
  trace::ProbeEvent& e = b.Probe(5000, 1, ProbeEventKind::kHostValueChanged, kGraph, ProbeOrigin::kUser);
  e.type = b.Intern("module-attribute");
  e.text = b.Intern("model.temperature");
  e.value = Bits(1.0);
  e.value_now = Bits(0.5);
  e.stack = TrainPyStack(b, 70);
  b.Replay(5100, 1, kStream, kCudaGraph, 10, 100);
  const std::vector<Finding> findings = Findings(analyzers::NewHostValueFrozenCheck(), b);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].message,
              HasSubstr("model.temperature is 0.5 at this replay, which the forward of a module that ran inside the "
                        "capture of the graph (captured at /home/me/train.py:12 in body) reads: the graph replays the "
                        "1 it was captured with"));
}

}  // namespace
}  // namespace graphcheck::testing_trace
