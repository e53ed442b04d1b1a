// Step signatures: what ran (control flow) and with which sizes (shapes), and the most common step.
#include "analysis/step_signatures.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/checks/trace/trace_builder.h"

namespace graphcheck::testing_trace {
namespace {

using analysis::Iteration;

// Three steps of two launches: the second step runs another kernel, the third the same kernels with another grid.
trace::Trace ThreeSteps(std::vector<Iteration>* steps) {
  TraceBuilder b;
  const std::vector<std::pair<std::string, uint32_t>> plan[] = {
      {{"gemm", 128}, {"relu", 64}}, {{"gemm", 128}, {"gelu", 64}}, {{"gemm", 256}, {"relu", 64}}};
  for (size_t s = 0; s < 3; ++s) {
    const uint64_t t0 = 10000 * (s + 1);
    for (size_t k = 0; k < plan[s].size(); ++k) {
      b.Launch(t0 + 1000 * (k + 1), 1, 7, plan[s][k].first, {plan[s][k].second, 1, 1});
    }
  }
  trace::Trace trace = b.Build();
  for (size_t s = 0; s < 3; ++s) {
    Iteration it;
    it.start_ns = 10000 * (s + 1);
    it.end_ns = 10000 * (s + 2);
    it.first_call = 2 * s;
    it.end_call = 2 * s + 2;
    it.index = s;
    steps->push_back(it);
  }
  return trace;
}

TEST(StepSignaturesTest, SequenceSeesControlFlowAndShapesSeeSizes) {
  std::vector<Iteration> steps;
  const trace::Trace trace = ThreeSteps(&steps);
  const analysis::StepSignatures signs = analysis::SignSteps(trace, steps);
  ASSERT_EQ(signs.sequences.size(), 3u);
  EXPECT_NE(signs.sequences[0], signs.sequences[1]);  // relu vs gelu
  EXPECT_EQ(signs.sequences[0], signs.sequences[2]);  // same kernels...
  EXPECT_NE(signs.shapes[0], signs.shapes[2]);        // ...other grid
  EXPECT_EQ(analysis::FirstDifference(trace, analysis::StepOperations(trace, steps[0]),
                                      analysis::StepOperations(trace, steps[1]), &analysis::SameOperation),
            1u);
  EXPECT_THAT(analysis::StepOperations(trace, steps[1]), ::testing::ElementsAre(2, 3));
}

TEST(StepSignaturesTest, MostCommonStepPrefersTheEarliestOnTies) {
  EXPECT_EQ(analysis::MostCommonStep({5, 7, 7, 5}, {0, 1, 2, 3}), 0u);
  EXPECT_EQ(analysis::MostCommonStep({5, 7, 7, 9}, {0, 1, 2, 3}), 1u);
  EXPECT_EQ(analysis::MostCommonStep({5, 7, 7, 9}, {0, 3}), 0u);
}

TEST(StepSignaturesTest, StepsFoundByRepetitionNeedAMajorityToBeTrusted) {
  analysis::Iterations nvtx;
  EXPECT_TRUE(analysis::TrustedSteps(nvtx, 4, 1));  // the program marked its steps
  analysis::Iterations guessed;
  guessed.eager_by_repetition = true;
  EXPECT_TRUE(analysis::TrustedSteps(guessed, 5, 4));
  EXPECT_FALSE(analysis::TrustedSteps(guessed, 4, 2));  // half agree: layers of one forward, not a loop
  EXPECT_FALSE(analysis::TrustedSteps(guessed, 2, 2));  // too few to call a loop
}

TEST(StepSignaturesTest, DescribesOperationsWithAndWithoutShape) {
  std::vector<Iteration> steps;
  const trace::Trace trace = ThreeSteps(&steps);
  EXPECT_TRUE(analysis::SameOperation(trace, trace.api_calls[0], trace.api_calls[4]));
  EXPECT_FALSE(analysis::SameShape(trace, trace.api_calls[0], trace.api_calls[4]));
  EXPECT_THAT(analysis::DescribeOperation(trace, trace.api_calls[0], false), ::testing::HasSubstr("gemm"));
  EXPECT_THAT(analysis::DescribeOperation(trace, trace.api_calls[4], true), ::testing::HasSubstr("256"));
}

}  // namespace
}  // namespace graphcheck::testing_trace
