// rng-unregistered-generator: the exception PyTorch raises for an unregistered generator in a capture.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "checks/checks.h"
#include "tests/checks/trace/probe_test_util.h"

namespace graphcheck::testing_trace {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

TEST(RngUnregisteredGeneratorTest, APrivateGeneratorInCaptureIsRngUnregisteredGenerator) {
  const trace::Trace trace =
      CaughtExceptionInCapture("Attempt to increase offset for a CUDA generator not in capture mode.");
  const std::vector<Finding> findings = RunCheck(checks::NewRngUnregisteredGeneratorCheck(), trace);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].check_id, "rng-unregistered-generator");
  EXPECT_THAT(findings[0].fix, HasSubstr("register_generator_state"));
  EXPECT_THAT(RunCheck(checks::NewCaptureErrorCheck(), trace), IsEmpty());
}

TEST(RngUnregisteredGeneratorTest, ACaptureLeftByAnotherExceptionIsNotThisCheck) {
  EXPECT_THAT(RunCheck(checks::NewRngUnregisteredGeneratorCheck(), CaughtExceptionInCapture(kPageable)), IsEmpty());
}

TEST(RngUnregisteredGeneratorTest, ACleanCaptureIsClean) {
  EXPECT_THAT(RunCheck(checks::NewRngUnregisteredGeneratorCheck(), FailedCapture([](TraceBuilder&) {}, 0)), IsEmpty());
}

}  // namespace
}  // namespace graphcheck::testing_trace
