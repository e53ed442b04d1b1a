// grad-aliases-graph: a .grad the probe saw in a make_graphed_callables graph's pool before a backward is
// reported at the program's backward line; no event, no finding.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "checks/checks.h"
#include "tests/checks/trace/contract_test_util.h"

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
  const std::vector<Finding> findings = Findings(checks::NewGradAliasesGraphCheck(), b);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].severity, Severity::kError);
  EXPECT_THAT(findings[0].message, HasSubstr("the .grad of 2 parameters: 0.weight, 0.bias are memory of the graphs"));
  EXPECT_THAT(findings[0].fix, HasSubstr("p.grad = torch.zeros_like(p) before torch.cuda.make_graphed_callables"));
  EXPECT_EQ(FirstUserFrame(findings[0].where)->line, 44u);
}

// The program's own capture of torch.autograd.grad, its output made the .grad outside it (`p.grad = g`): reported at
// the line the probe found, with the copy as the fix and nothing of make_graphed_callables.
TEST(GradAliasesGraphTest, AGraphOutputTheProgramMadeTheGradIsReportedAtItsLine) {
  TraceBuilder b;
  Capture(b);
  trace::ProbeEvent& e = b.Probe(5000, 1, ProbeEventKind::kGradAliased, kGraph, ProbeOrigin::kUser);
  e.value = 4;
  e.value_now = kPoolSegment + 0x200;
  e.text = b.Intern("model.0.weight, model.0.bias, model.2.weight, ...");
  e.stack = TrainPyStack(b, 51);
  const std::vector<Finding> findings = Findings(checks::NewGradAliasesGraphCheck(), b);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].message, HasSubstr("After this line the .grad of 4 parameters: model.0.weight"));
  EXPECT_THAT(findings[0].message, HasSubstr("are static outputs of the graph (captured at"));
  EXPECT_THAT(findings[0].message, ::testing::Not(HasSubstr("make_graphed_callables")));
  EXPECT_THAT(findings[0].fix, HasSubstr("p.grad = g.clone()"));
  EXPECT_EQ(FirstUserFrame(findings[0].where)->line, 51u);
}

TEST(GradAliasesGraphTest, NoEventNoFinding) {
  TraceBuilder b;
  Capture(b, ProbeOrigin::kGraphedCallables);
  b.Replay(5000, 1, kStream, kCudaGraph, 10, 100);
  EXPECT_THAT(Findings(checks::NewGradAliasesGraphCheck(), b), IsEmpty());
}

}  // namespace
}  // namespace graphcheck::testing_trace
