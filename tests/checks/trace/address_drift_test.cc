// address-drift: parameters and buffers of a graphed module that the probe saw rebound are reported, one finding per
// module and role, with both addresses and the program's line; static inputs and a trace without such events are not.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "checks/checks.h"
#include "tests/checks/trace/contract_test_util.h"

namespace graphcheck::testing_trace {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

constexpr uint64_t kModule = 0x7f00bb;

void Rebound(TraceBuilder& b, uint64_t t, uint64_t graph, const std::string& role, const std::string& name,
             uint64_t at_capture, uint64_t now) {
  b.Rebound(t, 1, graph, role, name, at_capture, now).stack = TrainPyStack(b, 31);
}

TEST(AddressDriftTest, AParameterReplacedAfterCaptureIsReported) {
  TraceBuilder b;
  b.Probe(100, 1, ProbeEventKind::kCaptureBegin, kModule, ProbeOrigin::kGraphedCallables).stack = TrainPyStack(b, 12);
  Rebound(b, 1000, kModule, "parameter", "0.weight", 0x7f0000001000, 0x7f0000002000);
  const std::vector<Finding> findings = RunCheck(checks::NewAddressDriftCheck(), b.Build());
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].check_id, "address-drift");
  EXPECT_EQ(findings[0].severity, Severity::kError);
  EXPECT_THAT(findings[0].message, HasSubstr("The parameter 0.weight of a module graphed by make_graphed_callables "
                                             "is a new tensor (captured at /home/me/train.py:12 in body)"));
  EXPECT_THAT(findings[0].message, HasSubstr("the optimizer steps the new ones"));
  EXPECT_THAT(findings[0].evidence[0], HasSubstr("0x7f0000001000 at capture, 0x7f0000002000 now"));
  ASSERT_NE(FirstUserFrame(findings[0].where), nullptr);
  EXPECT_EQ(FirstUserFrame(findings[0].where)->line, 31u);
  EXPECT_EQ(findings[0].where.key, "0.weight");
  EXPECT_THAT(findings[0].fix, HasSubstr("load_state_dict"));
}

TEST(AddressDriftTest, OneFindingPerModuleAndRole) {
  TraceBuilder b;
  for (int i = 0; i < 7; ++i) {
    Rebound(b, 1000 + i, kModule, "parameter", "layers." + std::to_string(i) + ".weight", 0x1000 + i, 0x9000 + i);
  }
  Rebound(b, 2000, kModule, "buffer", "bn.running_mean", 0x5000, 0x6000);
  const std::vector<Finding> findings = RunCheck(checks::NewAddressDriftCheck(), b.Build());
  ASSERT_THAT(findings, SizeIs(2));
  EXPECT_THAT(findings[0].message, HasSubstr("The buffer bn.running_mean"));
  EXPECT_THAT(findings[0].message, HasSubstr("the module's buffer no longer changes"));
  EXPECT_THAT(findings[1].message, HasSubstr("7 parameters of a module graphed by make_graphed_callables "
                                             "(layers.0.weight, layers.1.weight, layers.2.weight, ...) are new"));
  EXPECT_THAT(findings[1].evidence, SizeIs(6));
  EXPECT_EQ(findings[1].evidence.back(), "and 2 more");
}

TEST(AddressDriftTest, StaticInputsAndCleanTracesAreNotAddressDrift) {
  TraceBuilder clean;
  clean.Probe(100, 1, ProbeEventKind::kCaptureBegin, kModule, ProbeOrigin::kGraphedCallables);
  EXPECT_THAT(RunCheck(checks::NewAddressDriftCheck(), clean.Build()), IsEmpty());
  TraceBuilder manual;
  Rebound(manual, 1000, kGraph, "static-input", "static_x", 0x1000, 0x2000);
  EXPECT_THAT(RunCheck(checks::NewAddressDriftCheck(), manual.Build()), IsEmpty());
}

TEST(AddressDriftTest, AParameterOfAManualCaptureGivenNewDataIsReported) {
  TraceBuilder b;
  Capture(b);
  trace::ProbeEvent& e = b.Rebound(5000, 1, kGraph, "parameter", "model.fc.weight", kWeight, 0x7f0000900000);
  e.origin = ProbeOrigin::kUser;
  e.stack = TrainPyStack(b, 52);
  const std::vector<Finding> findings = Findings(checks::NewAddressDriftCheck(), b);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].message,
              HasSubstr("The parameter model.fc.weight that the graph reads is a new tensor or live in new memory"));
  EXPECT_THAT(findings[0].fix, HasSubstr("p.data.copy_(new) instead of p.data = new"));
  EXPECT_THAT(findings[0].fix, HasSubstr("capture the graph again"));
}

TEST(AddressDriftTest, OptimizerStateReplacedAfterCaptureIsReported) {
  TraceBuilder b;
  Capture(b);
  trace::ProbeEvent& e =
      b.Rebound(5000, 1, kGraph, "optimizer-state", "Adam exp_avg of model.fc.weight", kWeight, 0x7f0000900000);
  e.origin = ProbeOrigin::kUser;
  const std::vector<Finding> findings = Findings(checks::NewAddressDriftCheck(), b);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].message,
              HasSubstr("The optimizer state tensor Adam exp_avg of model.fc.weight that the graph reads is a new "
                        "tensor"));
  EXPECT_THAT(findings[0].message, HasSubstr("every replay steps with and updates the old state"));
  EXPECT_THAT(findings[0].fix, HasSubstr("state[key].copy_(saved[key])"));
}

TEST(AddressDriftTest, FreedMemoryIsLeftToGraphReadsFreed) {
  TraceBuilder b;
  Capture(b);
  b.Rebound(5000, 1, kGraph, "buffer", "model.buf", kBuffer, 0x7f0000900000).pool = 1;
  EXPECT_THAT(Findings(checks::NewAddressDriftCheck(), b), IsEmpty());
}

}  // namespace
}  // namespace graphcheck::testing_trace
