// output-overwritten: the program stopped reading an output a later replay of a torch.compile graph overwrote, or kept
// a manual graph's output across replays; invalidated outputs it never read again are clean.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "checks/checks.h"
#include "tests/checks/trace/probe_test_util.h"

namespace graphcheck::testing_trace {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

TEST(OutputOverwrittenTest, AnUncaughtOverwrittenOutputIsOutputOverwrittenWithTheInvalidationsBeforeIt) {
  TraceBuilder b;
  b.Probe(1000, 1, ProbeEventKind::kOutputsInvalidated).value = 2;
  b.Exception(2000, 1, ProbeEventKind::kUncaughtException, 0, "RuntimeError",
              "Error: accessing tensor output of CUDAGraphs that has been overwritten by a subsequent run. Stack "
              "trace: File \"gen.py\", line 9",
              b.PythonStack({{"/home/me/gen.py", 41, "main"}}));
  const std::vector<Finding> findings = RunCheck(checks::NewOutputOverwrittenCheck(), b.Build());
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].message, HasSubstr("The program stopped on RuntimeError: Error: accessing tensor output"));
  EXPECT_EQ(findings[0].where.python[0].line, 41);
  EXPECT_THAT(findings[0].evidence, Contains(HasSubstr("freed 2 outputs the program still held, in 1 later run of "
                                                       "its graphs")));
}

// The findings on the program's capture (at train.py:14) whose output `name` the probe saw held, `references_added`
// more at each replay (0: kept in an attribute by a method that reads it first), at train.py:`line`.
std::vector<Finding> ManualOutputHeld(const char* name, uint64_t references_added, uint32_t line) {
  TraceBuilder b;
  b.Probe(100, 1, ProbeEventKind::kCaptureBegin, kGraph, ProbeOrigin::kUser).stack = TrainPyStack(b, 14);
  trace::ProbeEvent& held = b.Probe(1000, 1, ProbeEventKind::kOutputsHeld, kGraph, ProbeOrigin::kUser);
  held.text = b.Intern(name);
  held.value = references_added;
  held.stack = TrainPyStack(b, line);
  return RunCheck(checks::NewOutputOverwrittenCheck(), b.Build());
}

TEST(OutputOverwrittenTest, AManualGraphsOutputKeptAcrossReplaysIsOutputOverwritten) {
  const std::vector<Finding> findings = ManualOutputHeld("static_out", 3, 21);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].message, HasSubstr("The program keeps `static_out`, an output of the graph (captured at "
                                             "/home/me/train.py:14 in body), across replays without a copy"));
  EXPECT_THAT(findings[0].evidence, Contains(HasSubstr("held 3 more references to `static_out`")));
  EXPECT_EQ(FirstUserFrame(findings[0].where)->line, 21u);
  EXPECT_THAT(findings[0].fix, HasSubstr("static_out.clone()"));
}

// Kept by an object as "the previous value" (blind set 3, logger-attr-output): at the method's store, by attribute.
TEST(OutputOverwrittenTest, AManualGraphsOutputKeptAsAPreviousValueIsOutputOverwrittenAtTheStore) {
  const std::vector<Finding> findings = ManualOutputHeld("ChurnLogger.prev", 0, 44);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].message, HasSubstr("`ChurnLogger.prev` keeps an output of the graph (captured at "
                                             "/home/me/train.py:14 in body) as it is, and the method that stores it "
                                             "reads it first"));
  EXPECT_EQ(FirstUserFrame(findings[0].where)->line, 44u);
  EXPECT_THAT(findings[0].fix, HasSubstr("ChurnLogger.prev.clone()"));
}

// A make_graphed_callables output read after the callable's next call (blind set 2's graphed-two-views: a teacher
// called on a weak and a strong view): named by its variable, at the call that returned it.
TEST(OutputOverwrittenTest, AGraphedCallablesOutputReadAfterItsNextCallIsOutputOverwritten) {
  TraceBuilder b;
  trace::ProbeEvent& held = b.Probe(1000, 1, ProbeEventKind::kOutputsHeld, 0x7f0010, ProbeOrigin::kGraphedCallables);
  held.text = b.Intern("p_weak");
  held.value = 1;
  held.stack = TrainPyStack(b, 33);
  const std::vector<Finding> findings = RunCheck(checks::NewOutputOverwrittenCheck(), b.Build());
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].message, HasSubstr("`p_weak` holds an output of a callable graphed by "
                                             "make_graphed_callables, and the program reads it after calling that "
                                             "callable again"));
  EXPECT_THAT(findings[0].evidence, Contains(HasSubstr("read after the next call")));
  EXPECT_EQ(FirstUserFrame(findings[0].where)->line, 33u);
  EXPECT_THAT(findings[0].fix, HasSubstr("outlive the next call (p_weak.clone()"));
}

// Outputs cudagraph trees invalidated that the program never reads again are harmless: no finding.
TEST(OutputOverwrittenTest, InvalidatedOutputsThatAreNotReadAreClean) {
  TraceBuilder b;
  b.Probe(1000, 1, ProbeEventKind::kOutputsInvalidated).value = 3;
  EXPECT_THAT(RunCheck(checks::NewOutputOverwrittenCheck(), b.Build()), IsEmpty());
}

}  // namespace
}  // namespace graphcheck::testing_trace
