#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "checks/checks.h"
#include "engine/run/engine_run.h"
#include "tests/checks/trace/trace_builder.h"

namespace graphcheck::testing_trace {
namespace {

using ::testing::HasSubstr;
using ::testing::SizeIs;

// Six eager steps, the fifth's gemm with grid `odd_grid`; then `graphed` steps that replay a graph.
trace::Trace Steps(uint32_t odd_grid, int graphed = 0) {
  TraceBuilder b;
  for (int s = 0; s < 6; ++s) {
    EagerSteps(&b, 1000000 + s * 100000, 1, 100000, {{"embed", 1}, {"gemm", s == 4 ? odd_grid : 16}, {"softmax", 4}});
  }
  for (int s = 0; s < graphed; ++s) b.Replay(2000000 + s * 100000, 1, 7, 1, 2000, 5000);
  return b.Build();
}

TEST(DynamicShapeTest, PointsAtTheLaunchWhoseGridChanged) {
  const trace::Trace trace = Steps(24);
  const std::vector<Finding> findings = RunCheck(checks::NewDynamicShapeCheck(), trace);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].where.api, "cudaLaunchKernel");
  EXPECT_THAT(findings[0].message, HasSubstr("gemm grid (24,1,1)"));
  EXPECT_THAT(findings[0].message, HasSubstr("gemm grid (16,1,1)"));
  EXPECT_THAT(RunCheck(checks::NewDynamicControlFlowCheck(), trace), SizeIs(0));
}

// An eager reference run (or an evaluation loop with a last short batch) beside the graphed loop is another phase of
// the program: a note (blind contract set 2's target-stats twin on an H200: a warning before).
TEST(DynamicShapeTest, EagerStepsBesideGraphedOnesAreANote) {
  const std::vector<Finding> findings = RunCheck(checks::NewDynamicShapeCheck(), Steps(24, 8));
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].severity, Severity::kNote);
  EXPECT_THAT(findings[0].evidence.back(), HasSubstr("also replays graphs in"));
}

// The probe saw a graphed callable called with a smaller last batch: PyTorch raised copying it into the static input.
// The finding is at the call, names both shapes and PyTorch's error; a batch of one broadcast silently is an error too.
TEST(DynamicShapeTest, AGraphedCallWithAnotherShapeIsAnErrorAtTheCall) {
  TraceBuilder b;
  trace::ProbeEvent& raised = b.Probe(1000, 1, trace::ProbeEventKind::kInputShapeChanged, 0x7f00bb);
  raised.type = b.Intern("raised");
  raised.text = b.Intern(
      "input 0: 8x64 float32, captured 32x64 float32\nRuntimeError: The size of tensor a (32) must match the size of "
      "tensor b (8) at non-singleton dimension 0");
  raised.stack = b.PythonStack({{"/home/me/train.py", 51, "main"}});
  trace::ProbeEvent& broadcast = b.Probe(2000, 1, trace::ProbeEventKind::kInputShapeChanged, 0x7f00bb);
  broadcast.type = b.Intern("broadcast");
  broadcast.text = b.Intern("input 0: 1x64 float32, captured 32x64 float32");
  broadcast.stack = b.PythonStack({{"/home/me/train.py", 60, "main"}});
  const std::vector<Finding> findings = RunCheck(checks::NewDynamicShapeCheck(), b.Build());
  ASSERT_THAT(findings, SizeIs(2));
  EXPECT_EQ(findings[0].severity, Severity::kError);
  EXPECT_THAT(findings[0].message, HasSubstr("called with input 0: 8x64 float32, captured 32x64 float32: PyTorch "
                                             "raised copying it into the graph's static input"));
  EXPECT_THAT(findings[0].evidence[0], HasSubstr("PyTorch raised RuntimeError: The size of tensor a (32)"));
  EXPECT_EQ(FirstUserFrame(findings[0].where)->line, 51);
  EXPECT_THAT(findings[0].fix, HasSubstr("drop_last=True"));
  EXPECT_THAT(findings[1].message, HasSubstr("by broadcasting, with no error"));
  EXPECT_EQ(FirstUserFrame(findings[1].where)->line, 60);
}

// graphcheck check --vary x:0=16,32,64 on a model whose graphs captured batch 64: the input and dimension are named,
// with what the graphs of each size cost; a size that failed says why.
TEST(DynamicShapeTest, EngineVariedDimensionNamesTheInputAndTheGraphsEachSizeNeeds) {
  EngineRun run;
  run.model = "builtin:mlp";
  run.shape_variation = ShapeVariation{
      "x",
      0,
      64,
      {ShapeVariant{16, true, true, 36, 8 << 20, ""}, ShapeVariant{32, true, true, 36, 16 << 20, ""},
       ShapeVariant{64, true, true, 36, 32 << 20, ""}, ShapeVariant{100000, false, false, 0, 0, "CUDA out of memory"}}};
  CheckInputs inputs;
  inputs.Add(run);
  const std::unique_ptr<Check> check = checks::NewDynamicShapeCheck();
  ASSERT_TRUE(check->CanRun(inputs));
  std::vector<Finding> findings;
  CheckOptions options;
  check->Run(inputs, BoundOptions(check->info(), options), &findings);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].message, HasSubstr("Input x's dimension 0 takes 4 sizes (16, 32, 64, 100000)"));
  EXPECT_THAT(findings[0].message, HasSubstr("it captured (64)"));
  EXPECT_THAT(findings[0].message, HasSubstr("for 3 of the sizes it was given: 56.0 MiB"));
  EXPECT_THAT(findings[0].evidence, ::testing::Contains(HasSubstr("size 100000: the eager step failed: CUDA out")));
  EXPECT_THAT(findings[0].fix, HasSubstr("Bucket dimension 0 of x"));

  // Only the captured size: nothing varies.
  run.shape_variation->variants = {ShapeVariant{64, true, true, 36, 32 << 20, ""}};
  findings.clear();
  check->Run(inputs, BoundOptions(check->info(), options), &findings);
  EXPECT_THAT(findings, SizeIs(0));
  // An engine run without --vary is not this check's input.
  run.shape_variation.reset();
  EXPECT_FALSE(check->CanRun(inputs));
}

TEST(DynamicShapeTest, StaticShapesAreClean) {
  EXPECT_THAT(RunCheck(checks::NewDynamicShapeCheck(), Steps(16)), SizeIs(0));
}

}  // namespace
}  // namespace graphcheck::testing_trace
