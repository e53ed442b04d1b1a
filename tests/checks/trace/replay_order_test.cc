// replay-order: graphs of one pool replayed going back to an earlier graph than the one before (not the first) are
// reported once per pool at the replay that went back; capture order, restarting from the first graph, skipping ahead,
// repeating a graph, graphs in separate pools, and replays before the pool's last capture are clean.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "checks/checks.h"
#include "tests/checks/trace/probe_test_util.h"

namespace graphcheck::testing_trace {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

// Captures graphs 1..n (CUDA graph ids 101..) into `pools[i]`, then replays the graph ids in `replays`.
// `origin` began every capture; Megatron's are layer i+1's forward graphs.
// `read_across`: the probe's event that the program read a later graph's output across a replay of that Python graph
// (0: none).
trace::Trace Replays(const std::vector<uint64_t>& pools, const std::vector<int>& replays, bool clone_outputs = false,
                     ProbeOrigin origin = ProbeOrigin::kGraphedCallables, uint64_t read_across = 0) {
  TraceBuilder b;
  uint64_t t = 1000;
  for (size_t i = 0; i < pools.size(); ++i, t += 1000) {
    trace::ProbeEvent& begin = b.Probe(t, 1, ProbeEventKind::kCaptureBegin, kGraph + i, origin);
    begin.stack = TrainPyStack(b, 10 + i);
    if (origin == ProbeOrigin::kMegatron) {
      begin.value = i + 1;
      begin.text = b.trace().Intern("forward");
    }
    b.Begin(t + 100, 1, kStream);
    TraceBuilder::In(b.Launch(t + 200, 1, kStream, "k"), kCaptureId + i);
    b.End(t + 300, 1, kStream, kCaptureId + i, 0, 1).graph_id = 101 + i;
    b.Probe(t + 400, 1, ProbeEventKind::kCaptureEnd, kGraph + i).pool = pools[i];
  }
  for (int graph : replays) {
    b.Replay(t, 1, kStream, 100 + graph, 100, 100).python_stack = TrainPyStack(b, 50);
    if (clone_outputs) b.Launch(t + 500, 1, kStream, "copy_output");
    t += 1000;
  }
  if (read_across != 0) {
    trace::ProbeEvent& held = b.Probe(t, 1, ProbeEventKind::kOutputsHeld, read_across + 1, origin);
    held.text = b.trace().Intern("scores");
    held.pool = read_across;
    held.value_now = 0x7f0000800000;
  }
  return b.Build();
}

TEST(ReplayOrderTest, GoingBackToAnEarlierGraphOfThePoolIsReported) {
  // Captured f1 f2 b1 b2 (Transformer Engine's _order), replayed f1 b1 f2 b2: f2 goes back after b1.
  const std::vector<Finding> findings = RunCheck(checks::NewReplayOrderCheck(), Replays({7, 7, 7, 7}, {1, 3, 2, 4}));
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].check_id, "replay-order");
  EXPECT_THAT(findings[0].message,
              HasSubstr("Graph 2 of a shared memory pool (captured at /home/me/train.py:11 in body) was replayed right "
                        "after graph 3 (captured at /home/me/train.py:12 in body)"));
  EXPECT_EQ(findings[0].evidence[0], "4 graphs share the pool, captured in the order 1 to 4");
  EXPECT_EQ(FirstUserFrame(findings[0].where)->line, 50u);
  EXPECT_EQ(findings[0].where.api, "cudaGraphLaunch");
}

// output-overwritten names the output the program read across the replay that went back (blind set 5's
// pipeline-pool-out-of-order, the pool-order set's distill-teacher-prefetch): one finding per defect, this one a note.
TEST(ReplayOrderTest, GoingBackWhereOutputOverwrittenNamesTheReadIsANote) {
  const std::vector<Finding> manual =
      RunCheck(checks::NewReplayOrderCheck(), Replays({7, 7, 7}, {1, 3, 2}, false, ProbeOrigin::kUser, kGraph + 1));
  ASSERT_THAT(manual, SizeIs(1));
  EXPECT_EQ(manual[0].severity, Severity::kNote);
  EXPECT_THAT(manual[0].message, HasSubstr("output-overwritten names an output of the pool read across"));
  const std::vector<Finding> callables = RunCheck(
      checks::NewReplayOrderCheck(), Replays({7, 7, 7, 7}, {1, 3, 2, 4}, false, ProbeOrigin::kGraphedCallables, 99));
  ASSERT_THAT(callables, SizeIs(1));
  EXPECT_EQ(callables[0].severity, Severity::kNote);
  const std::vector<Finding> other_pool =
      RunCheck(checks::NewReplayOrderCheck(), Replays({7, 7, 7}, {1, 3, 2}, false, ProbeOrigin::kUser, 12345));
  ASSERT_THAT(other_pool, SizeIs(1));
  EXPECT_EQ(other_pool[0].severity, Severity::kWarning);
}

// A serving loop over size buckets sharing a pool (vLLM's pattern) replays them in any order but copies each output
// out right after its replay: a note that says when that is safe, not a warning (seen on an H200 on
// bench/clean_corpus/shared_pool_buckets.py).
TEST(ReplayOrderTest, GoingBackAfterCopyingTheOutputsOutIsANote) {
  const std::vector<Finding> findings = RunCheck(
      checks::NewReplayOrderCheck(), Replays({7, 7, 7}, {1, 3, 2, 1, 3}, /*clone_outputs=*/true, ProbeOrigin::kUser));
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].severity, Severity::kNote);
  EXPECT_THAT(findings[0].message, HasSubstr("safe as long as no output of a later graph is read"));
  // One replay going back with nothing in between is enough for the warning.
  const std::vector<Finding> warned = RunCheck(checks::NewReplayOrderCheck(), Replays({7, 7, 7}, {1, 3, 2}));
  ASSERT_THAT(warned, SizeIs(1));
  EXPECT_EQ(warned[0].severity, Severity::kWarning);
}

// Megatron's per-layer graphs in a pipeline schedule regrouped after capture (seen on two H100s): the schedule's
// sends and receives run between the layers' replays, but a forward's activations wait in the pool for its backward,
// so the work in between consumed nothing: a warning, naming the layers' graphs.
TEST(ReplayOrderTest, TrainingGraphsGoingBackAreAWarningEvenWithWorkInBetween) {
  const std::vector<Finding> findings = RunCheck(
      checks::NewReplayOrderCheck(), Replays({7, 7, 7}, {1, 3, 2}, /*clone_outputs=*/true, ProbeOrigin::kMegatron));
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].severity, Severity::kWarning);
  EXPECT_THAT(findings[0].message,
              HasSubstr("Graph 2 of a shared memory pool (Megatron's layer 2 forward graph, captured at "
                        "/home/me/train.py:11 in body) was replayed right after graph 3 (Megatron's layer 3 forward "
                        "graph, captured at /home/me/train.py:12 in body)"));
}

TEST(ReplayOrderTest, CaptureOrderRestartsSkipsAndRepeatsAreClean) {
  const auto check = checks::NewReplayOrderCheck();
  EXPECT_THAT(RunCheck(check, Replays({7, 7, 7, 7}, {1, 2, 3, 4, 1, 2, 3, 4})), IsEmpty());  // training steps
  EXPECT_THAT(RunCheck(check, Replays({7, 7, 7, 7}, {1, 2, 1, 2, 1})), IsEmpty());           // forward only
  EXPECT_THAT(RunCheck(check, Replays({7, 7, 7}, {1, 3, 1, 1, 2, 2, 3})), IsEmpty());        // skip, repeat
  EXPECT_THAT(RunCheck(check, Replays({7, 8, 9}, {3, 2, 1})), IsEmpty());                    // separate pools
}

}  // namespace
}  // namespace graphcheck::testing_trace
