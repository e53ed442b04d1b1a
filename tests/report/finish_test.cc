// The finishing step (report/finish.h): the overrides applied, report order restored, the checks run sorted, and the
// verdict computed once from the finished findings.
#include "report/finish.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace graphcheck {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Report TwoFindings() {
  Report report;
  report.findings.resize(2);
  report.findings[0].check_id = "sync-in-capture";
  report.findings[0].severity = Severity::kError;
  report.findings[0].title = "A synchronizing call ran during CUDA graph capture";
  report.findings[1].check_id = "env-launch-blocking";
  report.findings[1].severity = Severity::kWarning;
  report.findings[1].title = "CUDA_LAUNCH_BLOCKING is set";
  report.checks_run = {"sync-in-capture", "env-launch-blocking"};
  return report;
}

TEST(FinishReportTest, TheVerdictNamesTheMostSevereFinding) {
  Report report = TwoFindings();
  FinishReport({}, &report);
  EXPECT_EQ(report.verdict.capturability, Capturability::kBlocked);
  EXPECT_THAT(report.verdict.headline, HasSubstr("(sync-in-capture)"));
}

// Overrides apply by glob; finishing puts the findings back in report order and sorts the checks run; the verdict
// follows the overridden severities.
TEST(FinishReportTest, OverridesApplyByGlobAndTheReportIsResortedBeforeTheVerdict) {
  Report report = TwoFindings();
  FinishReport({{"sync-*", Severity::kNote}, {"env-launch-blocking", Severity::kError}}, &report);
  EXPECT_EQ(report.findings[0].check_id, "env-launch-blocking");
  EXPECT_EQ(report.findings[0].severity, Severity::kError);
  EXPECT_EQ(report.findings[1].severity, Severity::kNote);
  EXPECT_THAT(report.checks_run, ElementsAre("env-launch-blocking", "sync-in-capture"));
  EXPECT_THAT(report.verdict.headline, HasSubstr("(env-launch-blocking)"));

  Report cleared = TwoFindings();
  FinishReport({{"*", Severity::kNote}}, &cleared);
  EXPECT_EQ(cleared.verdict.capturability, Capturability::kNoBlockerFound);
}

}  // namespace
}  // namespace graphcheck
