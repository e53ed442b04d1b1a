#include "checks/output/stderr_messages.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "checks/checks.h"
#include "cli/catalog.h"

namespace graphcheck::checks {

using analysis::MatchKnownMessage;
using analysis::ProgramOutput;
using analysis::StderrRule;
using analysis::StderrRules;

namespace {

using ::testing::HasSubstr;
using ::testing::SizeIs;

std::vector<Finding> Match(const std::vector<std::string>& lines) {
  const std::unique_ptr<Check> check = NewStderrMessagesCheck();
  const ProgramOutput output{lines};
  CheckInputs inputs;
  inputs.Add(output);
  std::vector<Finding> findings;
  check->Run(inputs, BoundOptions(check->info(), CheckOptions()), &findings);
  return findings;
}

TEST(StderrMessagesTest, MapsKnownMessagesToTheirChecks) {
  const std::vector<Finding> findings = Match({
      "Traceback (most recent call last):",
      "RuntimeError: CUDA error: operation not permitted when stream is capturing",
      "RuntimeError: CUDA error: operation not permitted when stream is capturing",
      "[Rank 0] Process group watchdog thread terminated with exception: CUDA error: operation not permitted when "
      "stream is capturing",
      "UserWarning: The AccumulateGrad node's stream does not match the stream of the node that produced the "
      "incoming gradient.",
      "AssertionError: check_for_nan_in_loss must be disabled when using full_iteration CUDA graph.",
      "RuntimeError: CUDA error: capture sequence contains a fork that was not joined to the primary stream",
      "epoch 1 loss 0.3",
  });
  ASSERT_THAT(findings, SizeIs(5));
  EXPECT_EQ(findings[0].check_id, "sync-in-capture");
  EXPECT_EQ(findings[0].where.file, kStderrFile);
  EXPECT_EQ(findings[0].where.line, 2);
  // The line and the known text it matched travel as fields, for the fold.
  ASSERT_TRUE(findings[0].stderr_match.has_value());
  EXPECT_EQ(findings[0].stderr_match->line, 2u);
  EXPECT_EQ(analysis::StderrRules()[findings[0].stderr_match->rule].check_id, "sync-in-capture");
  EXPECT_EQ(findings[0].evidence.back(), "matched 2 lines");
  EXPECT_THAT(findings[0].message, HasSubstr("900 cudaErrorStreamCaptureUnsupported"));
  EXPECT_EQ(findings[1].check_id, "unsafe-api-in-capture");
  EXPECT_EQ(findings[2].check_id, "legacy-stream-in-capture");
  EXPECT_EQ(findings[2].severity, Severity::kWarning);
  EXPECT_EQ(findings[3].check_id, "config-full-iteration-nan-check");
  EXPECT_EQ(findings[4].check_id, "unjoined-stream");
}

// Megatron Core 0.19.2's own refusals (cuda_graphs.py): a tracker that is not graph-safe, and a graphed layer called
// with other arguments than it captured (with and without pipeline parallelism).
TEST(StderrMessagesTest, MegatronCoresRefusalsMapToTheirChecks) {
  const std::vector<Finding> findings = Match({
      "AssertionError: RNG tracker does not support cudagraphs!",
      "AssertionError: CUDA graph argument mismatch:",
      "AssertionError: `cudagraph_created` is set to True but no matching cudagraph runners were found.",
  });
  ASSERT_THAT(findings, SizeIs(3));
  EXPECT_EQ(findings[0].check_id, "config-te-rng-tracker");
  EXPECT_THAT(findings[0].fix, HasSubstr("use_cudagraphable_rng=True"));
  for (size_t i : {1, 2}) {
    EXPECT_EQ(findings[i].check_id, "dynamic-shape");
    EXPECT_THAT(findings[i].fix, HasSubstr("fixed sequence length"));
  }
}

// Seen on an H200 (torch 2.11): torch.profiler started under graphcheck run, after the recorder had subscribed.
// An error whose fix is known gets that fix, not the generic one: an optimizer stepped inside a capture without
// capturable=True (torch 2.11's text).
TEST(StderrMessagesTest, AnOptimizerThatIsNotCapturableGetsItsFix) {
  const std::vector<Finding> findings = Match({
      "RuntimeError: Attempting CUDA graph capture of step() for an instance of Adam but param_groups' capturable is "
      "False.",
  });
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].check_id, "capture-error");
  EXPECT_THAT(findings[0].fix, HasSubstr("capturable=True"));
}

TEST(StderrMessagesTest, TheProgramsOwnProfilerLosingCuptiIsCuptiBusy) {
  const std::vector<Finding> findings = Match({
      "WARNING:2026-11-21 09:57:34 553:553 init.cpp:116] function cbapi->getCuptiStatus() failed with error "
      "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED (39)",
      "WARNING:2026-11-21 09:57:34 553:553 init.cpp:117] CUPTI initialization failed - CUDA profiler activities "
      "will be missing",
  });
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].check_id, "cupti-busy");
  EXPECT_EQ(findings[0].severity, Severity::kWarning);
  EXPECT_THAT(findings[0].message, HasSubstr("profiler"));
}

TEST(StderrMessagesTest, CleanOutputGivesNothing) {
  EXPECT_THAT(Match({"step 1 loss 2.3", "step 2 loss 2.1"}), SizeIs(0));
}

// A finding from the trace, then what `line` on stderr matched, folded as the analysis folds them.
std::vector<Finding> FoldedWithTraceFinding(const std::string& check_id, Severity severity, const std::string& line,
                                            const std::vector<std::string>& consequences = {},
                                            const std::vector<std::string>& evidence = {}) {
  std::vector<Finding> findings = Match({line});
  EXPECT_THAT(findings, SizeIs(1)) << line;
  Finding from_trace;
  from_trace.check_id = check_id;
  from_trace.severity = severity;
  from_trace.consequences = consequences;
  from_trace.evidence = evidence;
  findings.insert(findings.begin(), from_trace);
  FoldStderrFindings(TraceSummary{true, 1}, &findings);
  return findings;
}

constexpr char kGenericCaptureFailure[] =
    "capture failed: AcceleratorError: CUDA error: operation failed due to a previous error during capture";

TEST(StderrMessagesTest, FoldsIntoTheTraceFindingOfTheSameCheck) {
  const std::vector<Finding> findings =
      FoldedWithTraceFinding("sync-in-capture", Severity::kError,
                             "RuntimeError: CUDA error: operation not permitted when stream is capturing");
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].check_id, "sync-in-capture");
  EXPECT_THAT(findings[0].evidence, ::testing::ElementsAre(HasSubstr("stderr line 1:")));
}

// Seen on an H200 (first matmul inside a capture): PyTorch printed its generic "previous error during capture"
// while the trace named the root cause, a cuBLAS handle created in the capture, with the failed capture end among
// its consequences. The printed line is evidence of that finding, not a second capture-error.
TEST(StderrMessagesTest, AGenericCaptureFailureFoldsIntoTheRootCauseThatBrokeTheCapture) {
  const std::vector<Finding> findings =
      FoldedWithTraceFinding("warmup-insufficient", Severity::kError, kGenericCaptureFailure,
                             {"cudaStreamEndCapture on thread 7, stream 13 returned 901 "
                              "cudaErrorStreamCaptureInvalidated: no graph was made"});
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].check_id, "warmup-insufficient");
  EXPECT_THAT(findings[0].evidence, ::testing::ElementsAre(HasSubstr("previous error during capture")));
}

TEST(StderrMessagesTest, AGenericCaptureFailureStaysWhenNoFindingExplainsIt) {
  const std::vector<Finding> findings =
      FoldedWithTraceFinding("launch-bound", Severity::kWarning, kGenericCaptureFailure);
  ASSERT_THAT(findings, SizeIs(2));
  EXPECT_EQ(findings[1].check_id, "capture-error");
}

// PyTorch refused `.cpu()` inside a capture (stderr, error) while the trace holds only eager pageable copies (a
// note): the refusal stays its own error instead of disappearing into the note.
TEST(StderrMessagesTest, DoesNotFoldIntoALessSevereFinding) {
  const std::vector<Finding> findings =
      FoldedWithTraceFinding("pageable-memcpy", Severity::kNote,
                             "RuntimeError: Cannot copy between CPU and CUDA tensors during CUDA graph capture unless "
                             "the CPU tensor is pinned.");
  ASSERT_THAT(findings, SizeIs(2));
  EXPECT_EQ(findings[1].severity, Severity::kError);
  EXPECT_EQ(findings[1].check_id, "pageable-memcpy");
}

// Seen on an H100: a second thread's stream.query() during a global-mode capture. The trace's unsafe-api-in-capture
// finding lists the query that returned 900; the traceback lines printing CUDA's text for 900 repeat it and are
// evidence there, not sync-in-capture findings of their own.
TEST(StderrMessagesTest, CudasGenericTextFoldsIntoTheFindingThatListsItsCode) {
  const std::vector<Finding> findings =
      FoldedWithTraceFinding("unsafe-api-in-capture", Severity::kError,
                             "RuntimeError: CUDA error: operation not permitted when stream is capturing", {},
                             {"cudaEventQuery on thread 12, stream 7 returned 900 cudaErrorStreamCaptureUnsupported"});
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].check_id, "unsafe-api-in-capture");
  EXPECT_THAT(findings[0].evidence, ::testing::Contains(HasSubstr("stderr line 1:")));
}

constexpr char kAccumulateGradWarning[] =
    "UserWarning: The AccumulateGrad node's stream does not match the stream of the node that produced the incoming "
    "gradient.";

// PyTorch's make_graphed_callables prints this on clean programs (timm ResNet-18, GPT-2, plain MLPs on an H100):
// with traces whose captures did no legacy-stream work it is a note that says so.
TEST(StderrMessagesTest, AWarningTheTraceDoesNotConfirmIsANote) {
  std::vector<Finding> findings = Match({kAccumulateGradWarning});
  ASSERT_THAT(findings, SizeIs(1));
  FoldStderrFindings(TraceSummary{true, 3}, &findings);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].severity, Severity::kNote);
  EXPECT_THAT(findings[0].message, HasSubstr("no such problem in the 3 recorded captures: nothing breaks"));
}

TEST(StderrMessagesTest, AWarningTheTraceConfirmsFoldsIntoItsFinding) {
  const std::vector<Finding> findings =
      FoldedWithTraceFinding("legacy-stream-in-capture", Severity::kError, kAccumulateGradWarning);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].severity, Severity::kError);
}

TEST(StderrMessagesTest, WithoutATraceTheWarningStaysAWarning) {
  std::vector<Finding> findings = Match({kAccumulateGradWarning});
  FoldStderrFindings(TraceSummary{}, &findings);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].severity, Severity::kWarning);
}

// Megatron refuses a tracker while the model is built, before any capture: no trace finding to fold into, so the
// stderr finding takes the location where the probe saw the program stop on it (the program's frames).
TEST(StderrMessagesTest, ALineTheProgramStoppedOnTakesTheRaiseSite) {
  const std::string line = "[rank0]: AssertionError: RNG tracker does not support cudagraphs!";
  std::vector<Finding> findings = Match({"epoch 0", line});
  ASSERT_THAT(findings, SizeIs(1));
  TraceSummary traces{true, 0};
  ProgramStop& stop = traces.stops.emplace_back();
  stop.check_id = "config-te-rng-tracker";
  stop.where.python = {SourceFrame{"/home/me/train.py", 31, "build_model", true}};
  stop.where.pid = 77;
  FoldStderrFindings(traces, &findings);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].where.pid, 77u);
  ASSERT_THAT(findings[0].where.python, SizeIs(1));
  EXPECT_EQ(findings[0].where.python[0].line, 31);
  EXPECT_THAT(findings[0].evidence, ::testing::Contains("stderr line 2; the program stopped on it"));
  // A stop of another check leaves the line where it is.
  std::vector<Finding> other = Match({line});
  traces.stops[0].check_id = "dynamic-shape";
  FoldStderrFindings(traces, &other);
  EXPECT_EQ(other[0].where.file, kStderrFile);
}

TEST(StderrMessagesTest, TorchCompileTextsMapToTheirChecks) {
  const std::vector<Finding> findings = Match({
      "RuntimeError: Error: accessing tensor output of CUDAGraphs that has been overwritten by a subsequent run. "
      "Stack trace: File \"gen.py\", line 9, in step. To prevent overwriting, clone the tensor outside of "
      "torch.compile() or call torch.compiler.cudagraph_mark_step_begin() before each model invocation.",
      "W1124 12:00:00 torch/_inductor/cudagraph_utils.py:207] skipping cudagraphs due to mutated inputs (1 instances)",
      "AssertionError: CUDA graph argument mismatch:",
  });
  ASSERT_THAT(findings, SizeIs(3));
  EXPECT_EQ(findings[0].check_id, "output-overwritten");
  EXPECT_EQ(findings[0].severity, Severity::kError);
  EXPECT_EQ(findings[1].check_id, "compile-cudagraph-skipped");
  EXPECT_EQ(findings[2].check_id, "dynamic-shape");
}

TEST(StderrMessagesTest, MatchKnownMessageFindsTheFirstRule) {
  const StderrRule* rule = MatchKnownMessage("Attempt to increase offset for a CUDA generator not in capture mode.");
  ASSERT_NE(rule, nullptr);
  EXPECT_EQ(rule->check_id, "rng-unregistered-generator");
  EXPECT_EQ(MatchKnownMessage("loss 0.25"), nullptr);
}

TEST(StderrMessagesTest, EveryRuleNamesARegisteredCheck) {
  for (const StderrRule& rule : StderrRules()) {
    EXPECT_TRUE(BuiltinChecks().Find(rule.check_id) != nullptr) << rule.check_id;
    EXPECT_FALSE(rule.needles.empty());
    EXPECT_FALSE(rule.fix.empty()) << rule.check_id;
  }
}

}  // namespace
}  // namespace graphcheck::checks
