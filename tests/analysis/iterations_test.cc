#include "analysis/iterations.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/checks/trace/trace_builder.h"

namespace graphcheck::testing_trace {
namespace {

TEST(IterationsTest, FindsStepsByRepetitionDespiteAPrologueAndRepeatedKernels) {
  TraceBuilder b;
  b.Launch(100, 1, 7, "init_weights");
  // Each step: zero_grad, gemm x3, optimizer; gemm's count (3 per step) does not win over the once-per-step kernels.
  EagerSteps(&b, 1000000, 6, 100000, {{"zero_grad"}, {"gemm"}, {"gemm"}, {"gemm"}, {"adam"}});
  const trace::Trace trace = b.Build();
  analysis::IterationOptions options;
  options.first = 0;
  const analysis::Iterations steps =
      analysis::FindIterations(trace, analysis::NvtxIndex(trace), trace::DecodeProbeRecords(trace), options);
  ASSERT_EQ(steps.eager.size(), 5u);
  EXPECT_EQ(steps.eager[0].start_ns, 1000000u);
  EXPECT_EQ(steps.eager[0].end_ns, 1100000u);
  EXPECT_EQ(steps.eager[0].end_call - steps.eager[0].first_call, 5u);
  EXPECT_TRUE(steps.graphed.empty());
  EXPECT_THAT(steps.source, ::testing::HasSubstr("5 steps"));
}

// --shadow's own eager forwards (the probe's audit span) inside the third step: their launches anchor nothing, and
// the step they ran in is not a step of the program's (its time and kernels are not the program's).
TEST(IterationsTest, TheProbesOwnWorkIsNoStep) {
  TraceBuilder b;
  EagerSteps(&b, 1000000, 6, 100000, {{"zero_grad"}, {"gemm"}, {"adam"}});
  b.Probe(1250000, 1, trace::ProbeEventKind::kAuditBegin);
  for (int i = 0; i < 8; ++i) b.LaunchAndRun(1250100 + i * 100, 1, 7, "shadow_gemm", 1000, 1000);
  b.Probe(1260000, 1, trace::ProbeEventKind::kAuditEnd);
  const trace::Trace trace = b.Build();
  analysis::IterationOptions options;
  options.first = 0;
  const analysis::Iterations steps =
      analysis::FindIterations(trace, analysis::NvtxIndex(trace), trace::DecodeProbeRecords(trace), options);
  ASSERT_EQ(steps.eager.size(), 4u);  // 5 steps between the 6 anchors, less the one holding the audit
  for (const analysis::Iteration& step : steps.eager) {
    EXPECT_FALSE(step.start_ns <= 1250000 && 1250000 < step.end_ns) << step.start_ns;
  }
}

TEST(IterationsTest, GroupsALoopOfOneKernelIntoStepsOfThirtyTwoLaunches) {
  TraceBuilder b;
  EagerSteps(&b, 1000000, 200, 3000, {{"scale"}});
  const trace::Trace trace = b.Build();
  analysis::IterationOptions options;
  options.first = 0;
  const analysis::Iterations steps =
      analysis::FindIterations(trace, analysis::NvtxIndex(trace), trace::DecodeProbeRecords(trace), options);
  // 199 one-launch units (the last launch only ends the 199th) in groups of 32: 6 whole groups.
  ASSERT_EQ(steps.eager.size(), 6u);
  for (const analysis::Iteration& step : steps.eager) EXPECT_EQ(step.end_call - step.first_call, 32u);
  EXPECT_EQ(steps.eager[1].start_ns, steps.eager[0].end_ns);
  EXPECT_THAT(steps.source, ::testing::HasSubstr("grouped by 32"));
}

TEST(IterationsTest, SampledLaunchesGiveStepsInsideEachWindowOnly) {
  TraceBuilder b;
  b.trace().recorder.launches = trace::LaunchRecording::kSampled;
  // The recorder saw launches in two windows; the program ran steps of 100 us all along.
  b.trace().launch_windows = {{1000000, 1550000}, {5000000, 5550000}};
  EagerSteps(&b, 1000000, 6, 100000, {{"embed"}, {"gemm"}, {"loss"}});
  EagerSteps(&b, 5000000, 6, 100000, {{"embed"}, {"gemm"}, {"loss"}});
  const trace::Trace trace = b.Build();
  analysis::IterationOptions options;
  options.first = 0;
  const analysis::Iterations steps =
      analysis::FindIterations(trace, analysis::NvtxIndex(trace), trace::DecodeProbeRecords(trace), options);
  ASSERT_EQ(steps.eager.size(), 10u);  // 5 per window; none across the gap
  for (const analysis::Iteration& step : steps.eager) {
    EXPECT_EQ(step.end_ns - step.start_ns, 100000u);
    EXPECT_TRUE(step.launches_recorded);
  }
  EXPECT_THAT(steps.source, ::testing::HasSubstr("10 steps in 2 sampling windows"));
  EXPECT_THAT(steps.source, ::testing::HasSubstr("launches sampled: 0 steps without their launches"));
}

TEST(IterationsTest, NvtxStepsOutsideTheSamplingWindowsAreKeptWithoutTheirLaunches) {
  TraceBuilder b;
  b.trace().recorder.launches = trace::LaunchRecording::kSampled;
  b.trace().launch_windows = {{2000000, 4500000}};
  for (int s = 0; s < 6; ++s) {
    b.Push(1000000 * s, 1, "step");
    b.Pop(1000000 * s + 900000, 1);
  }
  const trace::Trace trace = b.Build();
  analysis::IterationOptions options;
  options.first = 0;
  const analysis::Iterations steps =
      analysis::FindIterations(trace, analysis::NvtxIndex(trace), trace::DecodeProbeRecords(trace), options);
  ASSERT_EQ(steps.eager.size(), 6u);
  const std::vector<analysis::Iteration> recorded = analysis::LaunchRecorded(steps.eager);
  ASSERT_EQ(recorded.size(), 2u);  // steps 2 and 3; step 4 runs past the window's end
  EXPECT_EQ(recorded[0].index, 2u);
  EXPECT_EQ(recorded[1].index, 3u);
}

TEST(IterationsTest, RegionAndStepRange) {
  TraceBuilder b;
  for (int s = 0; s < 5; ++s) {
    b.Push(1000 * s, 1, "iter");
    b.Launch(1000 * s + 10, 1, 7, "k");
    b.Pop(1000 * s + 900, 1);
  }
  const trace::Trace trace = b.Build();
  analysis::IterationOptions options;
  options.region = "iter";
  ASSERT_TRUE(analysis::ParseStepRange("2:4", &options).ok());
  const analysis::Iterations steps =
      analysis::FindIterations(trace, analysis::NvtxIndex(trace), trace::DecodeProbeRecords(trace), options);
  ASSERT_EQ(steps.eager.size(), 2u);
  EXPECT_EQ(steps.eager[0].index, 2u);
  EXPECT_EQ(steps.eager[1].start_ns, 3000u);
}

// Issue 46: an evaluation loop that replays a graph of the forward and, in the same step, runs the same forward
// eagerly to compare is neither a graphed nor an eager step (timed as graphed it was 228.7 us against 65.0 us
// eager). A step that replays a graphed module beside an eager optimizer (other kernels) stays a graphed step.
TEST(IterationsTest, AStepThatRerunsItsGraphsKernelsEagerlyIsNoGraphedStep) {
  const std::vector<std::string> forward = {"gemm", "bias", "relu", "gemm", "bias", "softmax"};
  TraceBuilder b;
  uint64_t t = 1000;
  b.Begin(t, 1, 9);
  for (const std::string& kernel : forward) TraceBuilder::In(b.Launch(t += 10, 1, 9, kernel), 1);
  b.End(t += 10, 1, 9, 1, 0, 6).graph_id = 5;
  for (int step = 0; step < 6; ++step) {
    t += 1000;
    b.Push(t, 1, "step");
    b.Replay(t + 10, 1, 7, 5, 100, 500);
    const bool with_reference = step % 2 == 0;
    if (with_reference) {
      for (const std::string& kernel : forward) b.Launch(t += 10, 1, 7, kernel);  // the eager reference
    } else {
      b.Launch(t += 10, 1, 7, "multi_tensor_apply_kernel");  // an eager optimizer step
    }
    b.Pop(t + 800, 1);
  }
  const trace::Trace trace = b.Build();
  const analysis::Iterations steps = analysis::FindIterations(
      trace, analysis::NvtxIndex(trace), trace::DecodeProbeRecords(trace), analysis::IterationOptions{});
  EXPECT_EQ(steps.reruns, 3u);
  EXPECT_EQ(steps.graphed.size(), 2u);  // the 3 with the optimizer, less the first (the default step range is 1:)
  EXPECT_THAT(steps.eager, ::testing::IsEmpty());
  EXPECT_THAT(steps.source,
              ::testing::HasSubstr("3 steps left out for replaying a graph and also launching its kernels"));
}

// Steps do not overlap: step ranges duplicated at identical times (a damaged trace's duplicated chunks; issue 46 found
// 5.5x the file size in memory, and 160 copies took 1.1 GB) or another thread's range of the same name inside a
// step give no step of their own, so no call is counted twice.
// A program that trains through its graph first and then runs the same steps eagerly from the same seeds, to compare
// (the blind contract set's twins on an H200): the eager anchor spans the capture and all the replays. Those replays
// are the graphed steps, and the step holding the capture is neither eager nor graphed.
TEST(IterationsTest, ReplaysBeforeTheEagerStepsAreGraphedSteps) {
  TraceBuilder b;
  EagerSteps(&b, 1000000, 3, 100000, {{"gemm"}, {"adam"}});  // warmup before the capture
  b.Begin(1300000, 1, 7);
  TraceBuilder::In(b.Launch(1300100, 1, 7, "gemm"), 5);
  b.End(1300200, 1, 7, 5, 0, 1).graph_id = 9;
  for (int r = 0; r < 8; ++r) {
    b.Launch(1400000 + r * 100000, 1, 7, "fill");  // the program's eager work beside each replay
    b.Replay(1400500 + r * 100000, 1, 7, 9, 1000, 20000);
  }
  EagerSteps(&b, 2300000, 11, 100000, {{"gemm"}, {"adam"}});  // the eager reference run
  const trace::Trace trace = b.Build();
  analysis::IterationOptions options;
  options.first = 0;
  const analysis::Iterations steps =
      analysis::FindIterations(trace, analysis::NvtxIndex(trace), trace::DecodeProbeRecords(trace), options);
  EXPECT_EQ(steps.graphed.size(), 7u) << steps.source;  // between the 8 replays
  for (const analysis::Iteration& step : steps.eager) {
    EXPECT_TRUE(step.end_ns <= 1300000 || step.start_ns >= 2300000) << step.start_ns;
  }
  EXPECT_EQ(steps.eager.size(), 10u) << steps.source;  // the eager run's; the 2 warmup steps go (capture warmup)
}

// Every step the trace has (the step range from 0).
analysis::Iterations EveryStep(const trace::Trace& trace) {
  analysis::IterationOptions options;
  options.first = 0;
  return analysis::FindIterations(trace, analysis::NvtxIndex(trace), trace::DecodeProbeRecords(trace), options);
}

// The probe's mark of a pass of the program's loop (python/probe/graphcheck_probe/steps.py). `anchor` "": a trace
// recorded before anchors were named (an optimizer step's).
void LoopPass(TraceBuilder* b, uint64_t t, uint64_t phase, const std::string& loop, const std::string& anchor = "") {
  trace::ProbeEvent& e = b->Probe(t, 1, trace::ProbeEventKind::kProgramStep);
  e.value = phase;
  e.text = b->Intern(loop);
  if (!anchor.empty()) e.type = b->Intern(anchor);
}

// An eager twin's loop, then a whole-step graph replayed in a loop that makes no marks (its optimizer steps inside
// the graph), then teardown: the eager steps are the marked loop's passes, each from one mark to the next, and the
// graphed steps are cut from the replays outside it. The set-up and teardown launches are in no step.
TEST(IterationsTest, TheProgramsLoopCutsItsSteps) {
  TraceBuilder b;
  b.Launch(100, 1, 7, "init_weights");
  b.Launch(200, 1, 7, "gemm");
  for (int pass = 0; pass < 14; ++pass) {
    const uint64_t t = 1000000 + pass * 100000;
    LoopPass(&b, t, 1, "train.py:30 in main");
    uint64_t at = t;
    for (const char* kernel : {"adam", "zero", "gemm", "gemm"}) b.Launch(at += 1000, 1, 7, kernel);
  }
  b.Begin(3000000, 1, 7);
  TraceBuilder::In(b.Launch(3000100, 1, 7, "gemm"), 5);
  b.End(3000200, 1, 7, 5, 0, 1).graph_id = 9;
  for (int r = 0; r < 8; ++r) b.Replay(3100000 + r * 100000, 1, 7, 9, 1000, 20000);
  b.Launch(4000000, 1, 7, "gemm");  // teardown
  const trace::Trace trace = b.Build();
  const analysis::Iterations steps = EveryStep(trace);
  ASSERT_EQ(steps.eager.size(), 13u) << steps.source;  // between the 14 marks; the last pass's end is not known
  EXPECT_EQ(steps.eager[0].start_ns, 1000000u);
  EXPECT_EQ(steps.eager[0].end_ns, 1100000u);
  EXPECT_EQ(steps.eager[0].end_call - steps.eager[0].first_call, 4u);
  EXPECT_EQ(steps.eager.back().end_ns, 2300000u);
  EXPECT_EQ(steps.graphed.size(), 7u) << steps.source;
  EXPECT_FALSE(steps.eager_by_repetition);
  EXPECT_EQ(steps.source,
            "the program's loop (13 eager steps at train.py:30 in main; 7 graphed steps cut from the replays)");
}

// Phases apart: an eager twin's loop (3 passes), a partially graphed loop (a replay in each of its 6 passes), then a
// per-epoch function's loop called twice (4 and 3 passes; between the calls, evaluation). The graphed steps are the
// graphed loop's; the eager steps the loop with the most, over both of its calls, and no step spans the evaluation.
TEST(IterationsTest, EachLoopIsAPhaseOfItsOwn) {
  TraceBuilder b;
  uint64_t t = 1000000;
  auto pass = [&](uint64_t phase, const std::string& loop, bool replay) {
    LoopPass(&b, t, phase, loop);
    b.Launch(t + 100, 1, 7, "adam");
    if (replay) b.Replay(t + 200, 1, 7, 9, 1000, 20000);
    b.Launch(t + 300, 1, 7, "gemm");
    t += 100000;
  };
  for (int i = 0; i < 3; ++i) pass(1, "twin.py:10 in main", false);
  b.Begin(t, 1, 7);
  TraceBuilder::In(b.Launch(t + 100, 1, 7, "gemm"), 5);
  b.End(t + 200, 1, 7, 5, 0, 1).graph_id = 9;
  t += 100000;
  for (int i = 0; i < 6; ++i) pass(2, "twin.py:20 in main", true);
  for (int i = 0; i < 4; ++i) pass(3, "twin.py:40 in one_epoch", false);
  const uint64_t evaluation = t;
  for (int i = 0; i < 5; ++i) b.Launch(t + i * 1000, 1, 7, "eval_gemm");
  t += 100000;
  for (int i = 0; i < 3; ++i) pass(4, "twin.py:40 in one_epoch", false);
  const trace::Trace trace = b.Build();
  const analysis::Iterations steps = EveryStep(trace);
  EXPECT_EQ(steps.graphed.size(), 5u) << steps.source;
  EXPECT_EQ(steps.eager.size(), 5u) << steps.source;  // 3 + 2 passes of the epoch loop; the twin's 2 are left out
  for (const analysis::Iteration& step : steps.eager) {
    EXPECT_FALSE(step.start_ns <= evaluation && evaluation < step.end_ns) << step.start_ns;
    EXPECT_GE(step.start_ns, 1000000u + 10 * 100000u) << "a step of the twin's loop";
  }
  EXPECT_THAT(steps.source, ::testing::HasSubstr("5 eager steps at twin.py:40 in one_epoch; 5 graphed steps at "
                                                 "twin.py:20 in main"));
}

// A serving program steps no optimizer: its graphed loop's passes are marked at its replays. An eager twin's loop (16
// passes, no mark), a capture, then a serving loop (7 passes, a replay each, its input copied in eagerly): the
// graphed steps are the serving loop's, the eager steps are found by repetition outside it, and the capture and the
// teardown are in no step.
TEST(IterationsTest, AServingLoopIsCutAtItsReplays) {
  TraceBuilder b;
  uint64_t t = 1000000;
  for (int i = 0; i < 16; ++i, t += 100000) {
    uint64_t at = t;
    for (const char* kernel : {"embed", "gemm", "softmax"}) b.Launch(at += 1000, 1, 7, kernel);
  }
  const uint64_t capture = t;
  b.Begin(t, 1, 7);
  TraceBuilder::In(b.Launch(t + 100, 1, 7, "gemm"), 5);
  b.End(t + 200, 1, 7, 5, 0, 1).graph_id = 9;
  t += 100000;
  for (int i = 0; i < 7; ++i, t += 100000) {
    LoopPass(&b, t, 1, "serve.py:20 in main", "replay");
    b.Launch(t + 100, 1, 7, "copy_input");
    b.Replay(t + 200, 1, 7, 9, 1000, 20000);
  }
  b.Launch(t, 1, 7, "teardown");
  const trace::Trace trace = b.Build();
  const analysis::Iterations steps = EveryStep(trace);
  EXPECT_EQ(steps.graphed.size(), 6u) << steps.source;
  EXPECT_GE(steps.eager.size(), 14u) << steps.source;
  for (const analysis::Iteration& step : steps.eager) EXPECT_LE(step.end_ns, capture) << step.start_ns;
  EXPECT_TRUE(steps.eager_by_repetition);
  EXPECT_THAT(steps.source, ::testing::MatchesRegex("the program's loop, at its replays \\(1[456] eager steps by "
                                                    "repetition; 6 graphed steps at serve.py:20 in main\\)"));
}

// A training program's first passes also send the replays' marks (the probe stops them at the first optimizer step):
// its steps are cut at its optimizer steps alone.
TEST(IterationsTest, OptimizerStepsCutATrainingProgramsStepsNotItsReplays) {
  TraceBuilder b;
  uint64_t t = 1000000;
  for (int i = 0; i < 3; ++i) LoopPass(&b, t + i * 10000, 1, "train.py:5 in main", "replay");  // before the first step
  for (int i = 0; i < 6; ++i, t += 100000) {
    LoopPass(&b, t + 50000, 2, "train.py:8 in main", "optimizer-step");
    for (const char* kernel : {"gemm", "adam"}) b.Launch(t + 60000, 1, 7, kernel);
  }
  const trace::Trace trace = b.Build();
  const analysis::Iterations steps = EveryStep(trace);
  EXPECT_EQ(steps.eager.size(), 5u) << steps.source;
  EXPECT_EQ(steps.eager.front().start_ns, 1050000u);
  EXPECT_THAT(steps.source, ::testing::StartsWith("the program's loop (5 eager steps at train.py:8 in main"));
}

// A loop that came round twice bounds one step at most: the steps are found by repetition as without the probe.
TEST(IterationsTest, AProgramWhoseLoopCameRoundTwiceFallsBackToRepetition) {
  TraceBuilder b;
  EagerSteps(&b, 1000000, 6, 100000, {{"zero_grad"}, {"gemm"}, {"adam"}});
  LoopPass(&b, 1000000, 1, "a.py:3 in main");
  LoopPass(&b, 1100000, 1, "a.py:3 in main");
  const trace::Trace trace = b.Build();
  const analysis::Iterations steps = EveryStep(trace);
  EXPECT_EQ(steps.eager.size(), 5u);
  EXPECT_TRUE(steps.eager_by_repetition);
  EXPECT_THAT(steps.source, ::testing::HasSubstr("repeated launch sequence"));
}

TEST(IterationsTest, OverlappingStepRangesAreOneStep) {
  TraceBuilder b;
  for (int s = 0; s < 5; ++s) {
    for (uint32_t thread : {1u, 1u, 2u}) b.Push(1000 * s + thread, thread, "iter");
    b.Launch(1000 * s + 10, 1, 7, "k");
    for (uint32_t thread : {1u, 1u, 2u}) b.Pop(1000 * s + 900 - thread, thread);
  }
  const trace::Trace trace = b.Build();
  analysis::IterationOptions options;
  options.region = "iter";
  options.first = 0;
  const analysis::Iterations steps =
      analysis::FindIterations(trace, analysis::NvtxIndex(trace), trace::DecodeProbeRecords(trace), options);
  ASSERT_EQ(steps.eager.size(), 5u);
  for (size_t i = 1; i < steps.eager.size(); ++i) EXPECT_GE(steps.eager[i].start_ns, steps.eager[i - 1].end_ns);
}

TEST(IterationsTest, ParsesStepRanges) {
  analysis::IterationOptions options;
  ASSERT_TRUE(analysis::ParseStepRange("3:", &options).ok());
  EXPECT_EQ(options.first, 3u);
  EXPECT_FALSE(options.last.has_value());
  ASSERT_TRUE(analysis::ParseStepRange(":7", &options).ok());
  EXPECT_EQ(options.first, 0u);
  EXPECT_EQ(options.last, 7u);
  ASSERT_TRUE(analysis::ParseStepRange("5", &options).ok());
  EXPECT_EQ(options.first, 5u);
  EXPECT_EQ(options.last, 6u);
  EXPECT_FALSE(analysis::ParseStepRange("4:2", &options).ok());
  EXPECT_FALSE(analysis::ParseStepRange("a:b", &options).ok());
  EXPECT_FALSE(analysis::ParseStepRange("", &options).ok());
}

}  // namespace
}  // namespace graphcheck::testing_trace
