#include "checks/checks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/checks/environment/env_checks_common.h"
#include "trace/events.h"

namespace graphcheck::checks {
namespace {

using ::testing::HasSubstr;
using testing_env::Env;
using testing_env::RunOn;

const std::unique_ptr<Check> kCheckOwner = NewEnvNcclAsyncErrorHandlingCheck();
const Check& kCheck = *kCheckOwner;

TEST(EnvNcclAsyncErrorHandlingTest, WarnsInADistributedJobWithHandlingOn) {
  auto unset = RunOn(kCheck, Env({{"WORLD_SIZE", "8"}}));
  ASSERT_EQ(unset.size(), 1u);
  EXPECT_EQ(unset[0].severity, Severity::kWarning);
  EXPECT_THAT(unset[0].message, HasSubstr("watchdog"));
  EXPECT_EQ(RunOn(kCheck, Env({{"WORLD_SIZE", "2"}, {"TORCH_NCCL_ASYNC_ERROR_HANDLING", "3"}})).size(), 1u);
}

TEST(EnvNcclAsyncErrorHandlingTest, CleanWhenOffOrNotDistributed) {
  EXPECT_TRUE(RunOn(kCheck, Env({{"WORLD_SIZE", "8"}, {"TORCH_NCCL_ASYNC_ERROR_HANDLING", "0"}})).empty());
  EXPECT_TRUE(RunOn(kCheck, Env({{"WORLD_SIZE", "1"}})).empty());
  EXPECT_TRUE(RunOn(kCheck, Env({})).empty());
}

// A trace whose threads have names: the training thread's capture, and the watchdog's event query during it,
// returning `query_rc` (0 as on the H100 with torch 2.11, or 901 as CUDA may answer a query it forbids).
trace::Trace WatchdogQueriedDuringCapture(int32_t query_rc) {
  trace::Trace trace;
  trace.thread_names.push_back({1, trace.Intern("python3")});
  trace.thread_names.push_back({2, trace.Intern("pt_nccl_watchdg")});
  trace::ApiCallRecord query;
  query.start_ns = 100;
  query.end_ns = 110;
  query.thread_id = 2;
  query.name = trace.Intern("cudaEventQuery");
  query.kind = trace::ApiKind::kEventQuery;
  query.return_code = query_rc;
  trace.AddCall(query);
  return trace;
}

std::vector<Finding> RunOnTrace(const Environment& env, const trace::Trace& trace) {
  CheckInputs inputs;
  inputs.Add(env);
  inputs.Add(trace);
  std::vector<Finding> findings;
  kCheck.Run(inputs, BoundOptions(kCheck.info(), CheckOptions()), &findings);
  return findings;
}

TEST(EnvNcclAsyncErrorHandlingTest, AWatchdogCallThatFailedInCaptureIsAnError) {
  const std::vector<Finding> findings =
      RunOnTrace(Env({{"WORLD_SIZE", "8"}}), WatchdogQueriedDuringCapture(/*query_rc=*/901));
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].severity, Severity::kError);
  EXPECT_EQ(findings[0].where.thread_id, 2u);
  EXPECT_THAT(findings[0].evidence,
              ::testing::Contains(HasSubstr("cudaEventQuery on NCCL's watchdog thread 2 (pt_nccl_watchdg) failed "
                                            "with 901")));
}

TEST(EnvNcclAsyncErrorHandlingTest, ATraceWhereTheWatchdogsCallsWorkedIsClean) {
  EXPECT_TRUE(RunOnTrace(Env({{"WORLD_SIZE", "8"}}), WatchdogQueriedDuringCapture(0)).empty());
  // A trace without thread names (before format 1.7) leaves the environment to decide.
  trace::Trace unnamed = WatchdogQueriedDuringCapture(0);
  unnamed.thread_names.clear();
  EXPECT_EQ(RunOnTrace(Env({{"WORLD_SIZE", "8"}}), unnamed).size(), 1u);
  // Handling off: nothing to say even when a call failed.
  EXPECT_TRUE(RunOnTrace(Env({{"WORLD_SIZE", "8"}, {"TORCH_NCCL_ASYNC_ERROR_HANDLING", "0"}}),
                         WatchdogQueriedDuringCapture(901))
                  .empty());
}

TEST(EnvNcclAsyncErrorHandlingTest, DistributedOptionOverridesDetection) {
  CheckOptions yes;
  yes.Set("env-nccl-async-error-handling", "distributed", "yes");
  EXPECT_EQ(RunOn(kCheck, Env({}), yes).size(), 1u);
  CheckOptions no;
  no.Set("env-nccl-async-error-handling", "distributed", "no");
  EXPECT_TRUE(RunOn(kCheck, Env({{"WORLD_SIZE", "8"}}), no).empty());
}

}  // namespace
}  // namespace graphcheck::checks
