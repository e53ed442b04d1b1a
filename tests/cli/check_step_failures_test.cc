// pipeline-step-failed and sync-in-region beside the capture check that names why the capture step failed: notes, so
// that one defect is one error; alone, or beside capture-error (which names no cause), or for a step that is not a
// capture, as they were.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cli/check_command.h"

namespace graphcheck {
namespace {

Finding Failed(const std::string& step) {
  Finding f;
  f.check_id = "pipeline-step-failed";
  f.severity = Severity::kError;
  f.where.nvtx_path = "graphcheck:" + step;
  return f;
}

Finding Error(const std::string& id) {
  Finding f;
  f.check_id = id;
  f.severity = Severity::kError;
  f.where.nvtx_path = "graphcheck:forward-capture";
  return f;
}

Finding Forecast() {
  Finding f;
  f.check_id = "sync-in-region";
  f.severity = Severity::kWarning;
  f.where.nvtx_path = "graphcheck:step";
  return f;
}

// The first finding's severity after the pass.
Severity StepFailureSeverity(std::vector<Finding> findings) {
  Report report;
  report.findings = std::move(findings);
  NoteWhatANamedCaptureFailureExplains(&report);
  return report.findings[0].severity;
}

TEST(CheckStepFailuresTest, ACaptureFailureACheckNamesIsANote) {
  EXPECT_EQ(StepFailureSeverity({Failed("forward-capture"), Error("sync-in-capture")}), Severity::kNote);
  EXPECT_EQ(StepFailureSeverity({Failed("forward-capture"), Error("pageable-memcpy")}), Severity::kNote);
  EXPECT_EQ(StepFailureSeverity({Forecast(), Failed("forward-capture"), Error("pageable-memcpy")}), Severity::kNote);
}

TEST(CheckStepFailuresTest, AFailureNoCheckExplainsStaysAnError) {
  EXPECT_EQ(StepFailureSeverity({Failed("forward-capture")}), Severity::kError);
  EXPECT_EQ(StepFailureSeverity({Failed("forward-capture"), Error("capture-error")}), Severity::kError);
  EXPECT_EQ(StepFailureSeverity({Failed("eager-reference"), Error("sync-in-capture")}), Severity::kError);
  Finding warning = Error("sync-in-capture");
  warning.severity = Severity::kWarning;
  EXPECT_EQ(StepFailureSeverity({Failed("forward-capture"), warning}), Severity::kError);
  EXPECT_EQ(StepFailureSeverity({Forecast(), Failed("forward-capture")}), Severity::kWarning);
}

}  // namespace
}  // namespace graphcheck
