// graph-reads-freed: a named buffer freed under a graph is reported where the program dropped it, a block the
// manifest names freed and then replayed at the replay; the graph's own pool, a block still allocated and a free no
// replay follows are left alone.
#include <string>
#include <utility>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "checks/checks.h"
#include "tests/checks/trace/contract_test_util.h"

namespace graphcheck::testing_trace {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

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
  const std::vector<Finding> findings = Findings(checks::NewGraphReadsFreedCheck(), b);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].message, HasSubstr("The buffer model.buf, which the graph (captured at"));
  EXPECT_THAT(findings[0].message, HasSubstr("was freed when this line dropped it"));
  EXPECT_EQ(FirstUserFrame(findings[0].where)->line, 33u);
  EXPECT_THAT(findings[0].evidence[1], HasSubstr("replayed after it at /home/me/train.py:35"));
}

// A checkpoint loaded with optimizer.load_state_dict() frees every state tensor a whole-step graph steps: one
// finding, at the line that dropped the first, naming the others.
TEST(GraphReadsFreedTest, TensorsOfOneRoleFreedTogetherAreOneFinding) {
  TraceBuilder b;
  Capture(b);
  for (int i = 0; i < 7; ++i) {
    trace::ProbeEvent& released = b.Probe(4000 + i, 1, ProbeEventKind::kTensorReleased, kGraph);
    released.type = b.Intern("optimizer-state");
    released.value = kBuffer + 0x1000 * i;
    released.stack = TrainPyStack(b, 61);
  }
  for (int i = 0; i < 7; ++i) {
    b.Rebound(5000 + i, 1, kGraph, "optimizer-state", "Adam exp_avg of model.fc" + std::to_string(i),
              kBuffer + 0x1000 * i, 0x7f0000300000)
        .pool = 1;
  }
  b.Replay(5100, 1, kStream, kCudaGraph, 10, 100);
  const std::vector<Finding> findings = Findings(checks::NewGraphReadsFreedCheck(), b);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].message, HasSubstr("The optimizer state tensor Adam exp_avg of model.fc0, which the graph"));
  EXPECT_THAT(findings[0].message, HasSubstr("Freed with it: 6 more optimizer state tensors that the graph reads."));
  EXPECT_EQ(FirstUserFrame(findings[0].where)->line, 61u);
  EXPECT_THAT(findings[0].evidence, SizeIs(6));  // five named, then "and 2 more"
}

TEST(GraphReadsFreedTest, AProgramBlockTheManifestNamesFreedThenReplayedIsReported) {
  TraceBuilder b;
  Allocation(b, 100, trace::AllocatorEvent::Action::kAlloc, 0x7f0000500000, 4096);
  Capture(b);
  Allocation(b, 4500, trace::AllocatorEvent::Action::kFree, 0x7f0000500000, 4096);
  b.Replay(5000, 1, kStream, kCudaGraph, 10, 100);
  const std::vector<Finding> findings = Findings(checks::NewGraphReadsFreedCheck(), b);
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
  EXPECT_THAT(Findings(checks::NewGraphReadsFreedCheck(), b), IsEmpty());
}

// make_graphed_callables' backward graph reads what its forward capture saved, in the pool they share, and autograd
// frees those blocks there. Memory an earlier capture allocated is a graph's, not the program's, also where the probe
// listed no pool segments.
TEST(GraphReadsFreedTest, ABlockAnEarlierCaptureAllocatedIsPoolMemory) {
  TraceBuilder b;
  b.Begin(200, 1, kStream);
  Allocation(b, 300, trace::AllocatorEvent::Action::kAlloc, 0x7f0000500000, 4096);  // the forward's saved tensor
  b.End(400, 1, kStream, kCaptureId + 1, 0, 1).graph_id = kCudaGraph + 1;
  Capture(b);
  Allocation(b, 4500, trace::AllocatorEvent::Action::kFree, 0x7f0000500000, 4096);
  b.Replay(5000, 1, kStream, kCudaGraph, 10, 100);
  EXPECT_THAT(Findings(checks::NewGraphReadsFreedCheck(), b), IsEmpty());
}

// One graph per bucket in a shared pool: the program keeps the graph but lets go of its output, a later capture in the
// pool takes that memory, and the graph is replayed. `kept`: the later capture keeps the block (its output, which the
// replay then writes over), else it is a temporary freed inside that capture (the pool's sharing as meant).
void OutputLetGoThenAnotherCapture(TraceBuilder& b, bool let_go, bool replay_after, bool kept = true) {
  Allocation(b, 2100, trace::AllocatorEvent::Action::kAlloc, kPoolSegment + 0x100, 512);  // the output
  Capture(b);
  if (let_go) Allocation(b, 4000, trace::AllocatorEvent::Action::kFree, kPoolSegment + 0x100, 512);
  b.Begin(5000, 1, kStream);
  const uint64_t taken = let_go ? kPoolSegment : kPoolSegment + 0x400;
  Allocation(b, 5200, trace::AllocatorEvent::Action::kAlloc, taken, 1024);
  if (!kept) Allocation(b, 5300, trace::AllocatorEvent::Action::kFree, taken, 1024);
  b.End(5500, 1, kStream, kCaptureId + 1, 0, 1).graph_id = kCudaGraph + 1;
  if (replay_after) b.Replay(6000, 1, kStream, kCudaGraph, 10, 100);
}

TEST(GraphReadsFreedTest, AnOutputLetGoAndKeptByALaterCaptureThenReplayedIsReported) {
  TraceBuilder b;
  OutputLetGoThenAnotherCapture(b, /*let_go=*/true, /*replay_after=*/true);
  const std::vector<Finding> findings = Findings(checks::NewGraphReadsFreedCheck(), b);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].message, HasSubstr("writes its output at 0x7f0000800100"));
  EXPECT_THAT(findings[0].message, HasSubstr("a later capture in the same pool took the memory and still holds it"));
  EXPECT_THAT(findings[0].fix, HasSubstr("Keep every graph's static outputs alive"));
}

TEST(GraphReadsFreedTest, AnOutputKeptOrNotReplayedAfterTheLaterCaptureIsLeftAlone) {
  for (const auto& [let_go, replay_after] : {std::pair{false, true}, std::pair{true, false}}) {
    TraceBuilder b;
    OutputLetGoThenAnotherCapture(b, let_go, replay_after);
    EXPECT_THAT(Findings(checks::NewGraphReadsFreedCheck(), b), IsEmpty()) << let_go << replay_after;
  }
}

TEST(GraphReadsFreedTest, AnOutputLetGoAndTakenForALaterCapturesTemporaryIsLeftAlone) {
  TraceBuilder b;
  OutputLetGoThenAnotherCapture(b, /*let_go=*/true, /*replay_after=*/true, /*kept=*/false);
  EXPECT_THAT(Findings(checks::NewGraphReadsFreedCheck(), b), IsEmpty());
}

// The probe's word on what the capture wrote (the graph-tensors event's type), and a static output it named.
void CaptureWrote(TraceBuilder& b, const char* writes) {
  for (trace::ProbeEvent& event : b.trace().probe_events) {
    if (event.kind != ProbeEventKind::kGraphTensors) continue;
    event.type = b.Intern(writes);
    event.text = b.Intern(
        "parameter\tmodel.fc.weight\t7f0000100000\t40000\n"
        "static-output\tout\t7f0000800100\t200\n"
        "pool\t\t7f0000800000\t200000\n");
  }
}

// A capture that wrote only its own memory, with two outputs and a temporary; the outputs let go at 4000 and 4200
// (`let_go_second`), a launch before and one after (at train.py:`line`; 0: the recorder kept no stack).
void OutputsLetGo(TraceBuilder& b, const char* writes, bool let_go_second, uint32_t line = 77) {
  Capture(b);
  CaptureWrote(b, writes);
  Allocation(b, 2100, trace::AllocatorEvent::Action::kAlloc, kPoolSegment + 0x100, 512);
  Allocation(b, 2200, trace::AllocatorEvent::Action::kAlloc, kPoolSegment + 0x400, 512);
  Allocation(b, 2300, trace::AllocatorEvent::Action::kAlloc, kPoolSegment + 0x800, 4096);  // a temporary
  Allocation(b, 2400, trace::AllocatorEvent::Action::kFree, kPoolSegment + 0x800, 4096);
  b.Replay(3800, 1, kStream, kCudaGraph, 10, 100);
  Allocation(b, 4000, trace::AllocatorEvent::Action::kFree, kPoolSegment + 0x100, 512);
  if (let_go_second) Allocation(b, 4200, trace::AllocatorEvent::Action::kFree, kPoolSegment + 0x400, 512);
  b.Replay(5000, 1, kStream, kCudaGraph, 10, 100).python_stack = line > 0 ? TrainPyStack(b, line) : 0;
}

TEST(GraphReadsFreedTest, ALaunchAfterEveryOutputOfAnOwnMemoryCaptureWasLetGoIsReported) {
  TraceBuilder b;
  OutputsLetGo(b, "own-memory", /*let_go_second=*/true);
  const std::vector<Finding> findings = Findings(checks::NewGraphReadsFreedCheck(), b);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].message, HasSubstr("writes only memory its capture allocated"));
  EXPECT_THAT(findings[0].message, HasSubstr("(2 blocks left allocated at the capture's end: its outputs)"));
  EXPECT_THAT(findings[0].message, HasSubstr("its result lands in no tensor the program holds"));
  EXPECT_THAT(findings[0].evidence, ::testing::Contains("outputs named at capture: out"));
  EXPECT_EQ(FirstUserFrame(findings[0].where)->line, 77u);
  EXPECT_THAT(findings[0].fix, HasSubstr("Keep every graph's static outputs alive"));
}

// The recorder keeps a launch's Python stack only when it goes back to an earlier graph: the finding points at the
// first later launch of the graph that has one.
TEST(GraphReadsFreedTest, ALaunchWithoutAStackIsLocatedAtTheNextLaunchWithOne) {
  TraceBuilder b;
  OutputsLetGo(b, "own-memory", /*let_go_second=*/true, /*line=*/0);
  b.Replay(6000, 1, kStream, kCudaGraph + 7, 10, 100).python_stack = TrainPyStack(b, 80);  // another graph's
  b.Replay(7000, 1, kStream, kCudaGraph, 10, 100).python_stack = TrainPyStack(b, 88);
  const std::vector<Finding> findings = Findings(checks::NewGraphReadsFreedCheck(), b);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(FirstUserFrame(findings[0].where)->line, 88u);
}

// One output still held, a capture that wrote the program's memory too (an optimizer step, a buffer updated in
// place), a probe that did not say (before format 1.15, or a library's capture): its launches are left alone.
TEST(GraphReadsFreedTest, AnOutputStillHeldOrACaptureThatWroteTheProgramsMemoryIsLeftAlone) {
  for (const auto& [writes, let_go_second] :
       {std::pair{"own-memory", false}, std::pair{"program-memory", true}, std::pair{"", true}}) {
    TraceBuilder b;
    OutputsLetGo(b, writes, let_go_second);
    EXPECT_THAT(Findings(checks::NewGraphReadsFreedCheck(), b), IsEmpty()) << writes << let_go_second;
  }
}

// A chain of graphs: a later capture reads the output while it is allocated. Its freeing is that graph's finding.
TEST(GraphReadsFreedTest, AnOutputAnotherGraphReadsIsLeftToThatGraph) {
  TraceBuilder b;
  OutputsLetGo(b, "own-memory", /*let_go_second=*/true);
  b.Begin(3200, 1, kStream);
  b.End(3400, 1, kStream, kCaptureId + 1, 0, 1).graph_id = kCudaGraph + 1;
  trace::GraphManifest& manifest = b.trace().graph_manifests.emplace_back();
  manifest.graph_id = kCudaGraph + 1;
  manifest.time_ns = 3400;
  manifest.uses = {{trace::GraphMemoryUse::Access::kArgument, kPoolSegment + 0x410, 0}};
  EXPECT_THAT(Findings(checks::NewGraphReadsFreedCheck(), b), IsEmpty());
}

// The bucket programs: the output let go, a later capture takes its memory for a temporary, and the graph replayed.
TEST(GraphReadsFreedTest, ABucketGraphWhoseOutputWasLetGoIsReportedWhenItsCaptureWroteOnlyItsOwnMemory) {
  TraceBuilder b;
  OutputLetGoThenAnotherCapture(b, /*let_go=*/true, /*replay_after=*/true, /*kept=*/false);
  CaptureWrote(b, "own-memory");
  const std::vector<Finding> findings = Findings(checks::NewGraphReadsFreedCheck(), b);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].message, HasSubstr("(1 block left allocated at the capture's end: its outputs)"));
}

}  // namespace
}  // namespace graphcheck::testing_trace
