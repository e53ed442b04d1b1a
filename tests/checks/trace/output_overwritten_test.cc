// output-overwritten: the program stopped reading an output a later replay of a torch.compile graph overwrote, or kept
// a manual graph's output across replays; invalidated outputs it never read again are clean.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "checks/checks.h"
#include "tests/checks/trace/contract_test_util.h"

namespace graphcheck::testing_trace {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

TEST(OutputOverwrittenTest, AnUncaughtOverwrittenOutputIsOutputOverwrittenWithTheInvalidationsBeforeIt) {
  TraceBuilder b;
  b.Probe(1000, 1, ProbeEventKind::kOutputsInvalidated).value = 2;
  b.Exception(2000, 1, ProbeEventKind::kUncaughtException, 0, "RuntimeError",
              "Error: accessing tensor output of CUDAGraphs that has been overwritten by a subsequent run. Stack "
              "trace: File \"gen.py\", line 9",
              b.PythonStack({{"/home/me/gen.py", 41, "main"}}));
  const std::vector<Finding> findings = RunCheck(checks::NewOutputOverwrittenCheck(), b.Build());
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].message, HasSubstr("The program stopped on RuntimeError: Error: accessing tensor output"));
  EXPECT_EQ(findings[0].where.python[0].line, 41);
  EXPECT_THAT(findings[0].evidence, Contains(HasSubstr("freed 2 outputs the program still held, in 1 later run of "
                                                       "its graphs")));
}

// The findings on the program's capture (at train.py:14) whose output `name` the probe saw held, `references_added`
// more at each replay (0: kept in an attribute by a method that reads it first), at train.py:`line`.
std::vector<Finding> ManualOutputHeld(const char* name, uint64_t references_added, uint32_t line) {
  TraceBuilder b;
  b.Probe(100, 1, ProbeEventKind::kCaptureBegin, kGraph, ProbeOrigin::kUser).stack = TrainPyStack(b, 14);
  trace::ProbeEvent& held = b.Probe(1000, 1, ProbeEventKind::kOutputsHeld, kGraph, ProbeOrigin::kUser);
  held.text = b.Intern(name);
  held.value = references_added;
  held.stack = TrainPyStack(b, line);
  return RunCheck(checks::NewOutputOverwrittenCheck(), b.Build());
}

TEST(OutputOverwrittenTest, AManualGraphsOutputKeptAcrossReplaysIsOutputOverwritten) {
  const std::vector<Finding> findings = ManualOutputHeld("static_out", 3, 21);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].message, HasSubstr("The program keeps `static_out`, an output of the graph (captured at "
                                             "/home/me/train.py:14 in body), across replays without a copy"));
  EXPECT_THAT(findings[0].evidence, Contains(HasSubstr("held 3 more references to `static_out`")));
  EXPECT_EQ(FirstUserFrame(findings[0].where)->line, 21u);
  EXPECT_THAT(findings[0].fix, HasSubstr("static_out.clone()"));
}

// Kept by an object as "the previous value" (blind set 3, logger-attr-output): at the method's store, by attribute.
TEST(OutputOverwrittenTest, AManualGraphsOutputKeptAsAPreviousValueIsOutputOverwrittenAtTheStore) {
  const std::vector<Finding> findings = ManualOutputHeld("ChurnLogger.prev", 0, 44);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].message, HasSubstr("`ChurnLogger.prev` keeps an output of the graph (captured at "
                                             "/home/me/train.py:14 in body) as it is, and the method that stores it "
                                             "reads it first"));
  EXPECT_EQ(FirstUserFrame(findings[0].where)->line, 44u);
  EXPECT_THAT(findings[0].fix, HasSubstr("ChurnLogger.prev.clone()"));
}

// A make_graphed_callables output read after the callable's next call (blind set 2's graphed-two-views: a teacher
// called on a weak and a strong view): named by its variable, at the call that returned it.
TEST(OutputOverwrittenTest, AGraphedCallablesOutputReadAfterItsNextCallIsOutputOverwritten) {
  TraceBuilder b;
  trace::ProbeEvent& held = b.Probe(1000, 1, ProbeEventKind::kOutputsHeld, 0x7f0010, ProbeOrigin::kGraphedCallables);
  held.text = b.Intern("p_weak");
  held.value = 1;
  held.stack = TrainPyStack(b, 33);
  const std::vector<Finding> findings = RunCheck(checks::NewOutputOverwrittenCheck(), b.Build());
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].message, HasSubstr("`p_weak` holds an output of a callable graphed by "
                                             "make_graphed_callables, and the program reads it after calling that "
                                             "callable again"));
  EXPECT_THAT(findings[0].evidence, Contains(HasSubstr("read after the next call")));
  EXPECT_EQ(FirstUserFrame(findings[0].where)->line, 33u);
  EXPECT_THAT(findings[0].fix, HasSubstr("outlive the next call (p_weak.clone()"));
}

// Two captures into one pool (blind set 5's pipeline-pool-out-of-order): the program's graph kGraph (Capture(), whose
// manifest names kPoolSegment + 0x100) and a later one, kGraph + 1 at train.py:20, whose output is at `output`; then
// the probe's event: `name`, holding that output, read across a replay of kGraph, at train.py:`line`. `temporary`:
// kGraph's capture allocated the block at kPoolSegment + 0x100 and let it go at its end. `history`: the allocator's
// history and the manifest are in the trace (else neither is).
void ReadAcrossAnEarlierReplay(TraceBuilder& b, uint64_t output, const char* name, uint32_t line, bool temporary = true,
                               bool history = true) {
  if (temporary) {
    Allocation(b, 2100, trace::AllocatorEvent::Action::kAlloc, kPoolSegment + 0x100, 512);
    Allocation(b, 2900, trace::AllocatorEvent::Action::kFree, kPoolSegment + 0x100, 512);
  }
  Capture(b);
  b.Probe(4900, 1, ProbeEventKind::kCaptureBegin, kGraph + 1, ProbeOrigin::kUser).stack = TrainPyStack(b, 20);
  b.Begin(5000, 1, kStream);
  Allocation(b, 5200, trace::AllocatorEvent::Action::kAlloc, output, 512);
  b.End(5500, 1, kStream, kCaptureId + 1, 0, 1).graph_id = kCudaGraph + 1;
  if (!history) {
    b.trace().allocations.clear();
    b.trace().graph_manifests.clear();
  }
  trace::ProbeEvent& held = b.Probe(7000, 1, ProbeEventKind::kOutputsHeld, kGraph + 1, ProbeOrigin::kUser);
  held.text = b.Intern(name);
  held.pool = kGraph;
  held.value_now = output;
  held.stack = TrainPyStack(b, line);
}

TEST(OutputOverwrittenTest, ALaterCapturesOutputReadAcrossAnEarlierGraphsReplayIsOutputOverwritten) {
  TraceBuilder b;
  ReadAcrossAnEarlierReplay(b, kPoolSegment + 0x100, "scores", 45);
  const std::vector<Finding> findings = RunCheck(checks::NewOutputOverwrittenCheck(), b.Build());
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].message, HasSubstr("`scores` holds an output of the graph (captured at /home/me/train.py:20 "
                                             "in body), and the program reads it after replaying the graph (captured "
                                             "at /home/me/train.py:12 in body), which was captured before it into the "
                                             "same memory pool"));
  EXPECT_THAT(findings[0].evidence, Contains(HasSubstr("that replay writes into the block holding the output at "
                                                       "0x7f0000800100")));
  EXPECT_EQ(FirstUserFrame(findings[0].where)->line, 45u);
  EXPECT_THAT(findings[0].fix, HasSubstr("scores.clone()"));
}

// The earlier graph's memory does not reach the output's block: its replay leaves the output alone.
TEST(OutputOverwrittenTest, AnOutputTheEarlierGraphsReplayDoesNotWriteIsLeftAlone) {
  TraceBuilder b;
  ReadAcrossAnEarlierReplay(b, kPoolSegment + 0x1000, "scores", 45);
  EXPECT_THAT(RunCheck(checks::NewOutputOverwrittenCheck(), b.Build()), IsEmpty());
  TraceBuilder kept;  // the block the manifest names was not a temporary of the earlier capture
  ReadAcrossAnEarlierReplay(kept, kPoolSegment + 0x100, "scores", 45, /*temporary=*/false);
  EXPECT_THAT(RunCheck(checks::NewOutputOverwrittenCheck(), kept.Build()), IsEmpty());
}

// Without the manifest or the allocator's history, the probe's event stands on the pool's rule.
TEST(OutputOverwrittenTest, WithoutTheAllocatorsHistoryAReadAcrossAnEarlierReplayStandsOnThePoolsRule) {
  TraceBuilder b;
  ReadAcrossAnEarlierReplay(b, kPoolSegment + 0x100, "pending", 90, true, /*history=*/false);
  const std::vector<Finding> findings = RunCheck(checks::NewOutputOverwrittenCheck(), b.Build());
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].evidence, Contains(HasSubstr("to be replayed in the order they were captured")));
}

// One list holding outputs of several later graphs (blind set 5's bucket-tick-gather): one finding at its line.
TEST(OutputOverwrittenTest, OneHolderOfSeveralLaterOutputsIsOneFinding) {
  TraceBuilder b;
  ReadAcrossAnEarlierReplay(b, kPoolSegment + 0x100, "pending", 90);
  trace::ProbeEvent& second = b.Probe(7100, 1, ProbeEventKind::kOutputsHeld, kGraph + 2, ProbeOrigin::kUser);
  second.text = b.Intern("pending");
  second.pool = kGraph;
  second.value_now = kPoolSegment + 0x100;
  second.stack = TrainPyStack(b, 90);
  const std::vector<Finding> findings = RunCheck(checks::NewOutputOverwrittenCheck(), b.Build());
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].evidence, Contains(HasSubstr("also an output of the graph")));
}

// Callables graphed together by make_graphed_callables (blind pool-order distill-teacher-prefetch: the teacher, first
// in the tuple, called between the student's forward and the use of its output): named as the tuple's order.
TEST(OutputOverwrittenTest, ALaterCallablesOutputReadAcrossACallOfAnEarlierOneIsOutputOverwritten) {
  TraceBuilder b;
  trace::ProbeEvent& held = b.Probe(1000, 1, ProbeEventKind::kOutputsHeld, 0x7f0020, ProbeOrigin::kGraphedCallables);
  held.text = b.Intern("s_logits");
  held.pool = 0x7f0010;
  held.value_now = 0x7f0000900000;
  held.stack = TrainPyStack(b, 63);
  const std::vector<Finding> findings = RunCheck(checks::NewOutputOverwrittenCheck(), b.Build());
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].message, HasSubstr("`s_logits` holds an output of a callable that make_graphed_callables "
                                             "graphed together with others, and the program reads it after calling "
                                             "one that comes before it in that tuple"));
  EXPECT_EQ(FirstUserFrame(findings[0].where)->line, 63u);
  EXPECT_THAT(findings[0].fix, HasSubstr("in the order of the tuple"));
}

// Outputs cudagraph trees invalidated that the program never reads again are harmless: no finding.
TEST(OutputOverwrittenTest, InvalidatedOutputsThatAreNotReadAreClean) {
  TraceBuilder b;
  b.Probe(1000, 1, ProbeEventKind::kOutputsInvalidated).value = 3;
  EXPECT_THAT(RunCheck(checks::NewOutputOverwrittenCheck(), b.Build()), IsEmpty());
}

}  // namespace
}  // namespace graphcheck::testing_trace
