// Tests of the check registry, --checks selection, check options and the runner.
#include "core/registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/environment.h"

namespace graphcheck {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class FakeCheck : public CheckOf<Environment> {
 public:
  FakeCheck(std::string id, Severity severity, std::vector<CheckOption> options = {})
      : CheckOf(
            CheckInfo{std::move(id), "fake", severity, CheckArea::kEnvironment, "a fake check", std::move(options)}) {}

 protected:
  void Read(const Environment& env, const BoundOptions& options, std::vector<Finding>* findings) const override {
    if (env.Get("FIRE") == nullptr) return;
    Finding f = NewFinding();
    f.message = "threshold " + options.Get("threshold");
    findings->push_back(f);
  }
};

// Reports the same mistake at one call site `repeats` times, and two different problems with no call site.
class RepeatingCheck : public CheckOf<Environment> {
 public:
  explicit RepeatingCheck(int repeats)
      : CheckOf(CheckInfo{"env-repeat", "repeats", Severity::kWarning, CheckArea::kEnvironment, "", {}}),
        repeats_(repeats) {}

 protected:
  void Read(const Environment&, const BoundOptions&, std::vector<Finding>* findings) const override {
    for (int i = 0; i < repeats_; ++i) {
      Finding f = NewFinding();
      f.message = "synchronized inside the step";
      f.where.api = "cudaStreamSynchronize";
      f.where.python = {{"train.py", 42, "step", true}};
      f.where.thread_id = i;  // not part of the call site
      findings->push_back(std::move(f));
    }
    for (const char* message : {"records were lost", "the trace was cut short"}) {
      Finding f = NewFinding();
      f.message = message;
      findings->push_back(std::move(f));
    }
  }

 private:
  int repeats_;
};

// Reports under another check's id (as stderr-messages does for a known message).
class ReportsUnderCheck : public CheckOf<Environment> {
 public:
  explicit ReportsUnderCheck(std::string under)
      : CheckOf(CheckInfo{"env-messages", "Known messages", Severity::kNote, CheckArea::kEnvironment, "", {}}),
        under_(std::move(under)) {}

 protected:
  void Read(const Environment&, const BoundOptions&, std::vector<Finding>* findings) const override {
    findings->push_back(NewFindingUnder(under_, Severity::kError));
  }

 private:
  std::string under_;
};

CheckRegistry MakeRegistry() {
  CheckRegistry registry;
  EXPECT_TRUE(registry.Add(std::make_unique<FakeCheck>("env-b", Severity::kWarning)).ok());
  EXPECT_TRUE(
      registry
          .Add(std::make_unique<FakeCheck>("env-a", Severity::kError, std::vector<CheckOption>{{"threshold", "5", ""}}))
          .ok());
  EXPECT_TRUE(registry.Add(std::make_unique<FakeCheck>("capture-x", Severity::kNote)).ok());
  return registry;
}

TEST(CheckRegistryTest, RejectsDuplicateAndMalformedIds) {
  CheckRegistry registry = MakeRegistry();
  EXPECT_EQ(registry.Add(std::make_unique<FakeCheck>("env-a", Severity::kNote)).code(),
            absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(registry.Add(std::make_unique<FakeCheck>("Env_A", Severity::kNote)).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(registry.Add(std::make_unique<FakeCheck>("-lead", Severity::kNote)).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(CheckRegistryTest, AllIsSortedById) {
  CheckRegistry registry = MakeRegistry();
  std::vector<std::string> ids;
  for (const Check* c : registry.All()) ids.push_back(c->info().id);
  EXPECT_THAT(ids, ElementsAre("capture-x", "env-a", "env-b"));
}

TEST(CheckSelectionTest, GlobsIncludeAndExcludeInOrder) {
  auto all = CheckSelection::Parse("");
  ASSERT_TRUE(all.ok());
  EXPECT_TRUE(all->Selects("anything"));

  auto env_but_b = CheckSelection::Parse("env-*,-env-b");
  ASSERT_TRUE(env_but_b.ok());
  EXPECT_TRUE(env_but_b->Selects("env-a"));
  EXPECT_FALSE(env_but_b->Selects("env-b"));
  EXPECT_FALSE(env_but_b->Selects("capture-x"));

  auto only_exclusion = CheckSelection::Parse("-capture-*");
  ASSERT_TRUE(only_exclusion.ok());
  EXPECT_TRUE(only_exclusion->Selects("env-a"));
  EXPECT_FALSE(only_exclusion->Selects("capture-x"));
}

TEST(CheckSelectionTest, RejectsBadPatternsAndUnknownIds) {
  EXPECT_FALSE(CheckSelection::Parse("env a").ok());
  CheckRegistry registry = MakeRegistry();
  auto typo = CheckSelection::Parse("env-aa");
  ASSERT_TRUE(typo.ok());
  absl::Status status = typo->ValidateAgainst(registry);
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(status.message(), HasSubstr("env-aa"));
  auto glob = CheckSelection::Parse("nothing-*");
  ASSERT_TRUE(glob.ok());
  EXPECT_TRUE(glob->ValidateAgainst(registry).ok());
}

TEST(CheckOptionsTest, ParsesValidatesAndFallsBackToDefaults) {
  CheckRegistry registry = MakeRegistry();
  CheckOptions options;
  EXPECT_FALSE(options.ParseAndSet("no-dot=1").ok());
  EXPECT_FALSE(options.ParseAndSet("env-a.threshold").ok());
  ASSERT_TRUE(options.ParseAndSet("env-a.threshold=7").ok());
  EXPECT_TRUE(registry.ValidateOptions(options).ok());

  CheckOptions unknown;
  ASSERT_TRUE(unknown.ParseAndSet("env-a.nope=1").ok());
  EXPECT_EQ(registry.ValidateOptions(unknown).code(), absl::StatusCode::kNotFound);
  CheckOptions not_a_number;
  ASSERT_TRUE(not_a_number.ParseAndSet("env-a.threshold=high").ok());
  EXPECT_EQ(registry.ValidateOptions(not_a_number).code(), absl::StatusCode::kInvalidArgument);

  const Check* check = registry.Find("env-a");
  ASSERT_NE(check, nullptr);
  EXPECT_EQ(BoundOptions(check->info(), options).GetDouble("threshold"), 7);
  EXPECT_EQ(BoundOptions(check->info(), CheckOptions()).GetDouble("threshold"), 5);
}

TEST(RunChecksTest, RunsSelectedChecksWithInputsAndSortsBySeverity) {
  CheckRegistry registry = MakeRegistry();
  Environment env;
  env.Set("FIRE", "1");
  CheckInputs inputs;
  inputs.Add(env);
  auto selection = CheckSelection::Parse("-capture-x");
  ASSERT_TRUE(selection.ok());
  CheckRun run = RunChecks(registry, *selection, CheckOptions(), inputs);
  EXPECT_THAT(run.checks_run, ElementsAre("env-a", "env-b"));
  ASSERT_EQ(run.findings.size(), 2u);
  EXPECT_EQ(run.findings[0].check_id, "env-a");
  EXPECT_EQ(run.findings[0].severity, Severity::kError);
  EXPECT_EQ(run.findings[0].message, "threshold 5");
  EXPECT_EQ(run.findings[1].check_id, "env-b");
}

// A finding made by one check under another's id carries the title of the check it is reported under.
TEST(RunChecksTest, AFindingUnderAnotherIdCarriesThatChecksTitle) {
  CheckRegistry registry;
  ASSERT_TRUE(registry.Add(std::make_unique<ReportsUnderCheck>("env-a")).ok());
  ASSERT_TRUE(registry.Add(std::make_unique<FakeCheck>("env-a", Severity::kError)).ok());
  CheckInputs inputs;
  Environment env;
  inputs.Add(env);
  auto selection = CheckSelection::Parse("*");
  ASSERT_TRUE(selection.ok());
  CheckRun run = RunChecks(registry, *selection, CheckOptions(), inputs);
  ASSERT_EQ(run.findings.size(), 1u);
  EXPECT_EQ(run.findings[0].check_id, "env-a");
  EXPECT_EQ(run.findings[0].title, "fake");
}

TEST(RunChecksTest, OneMistakeRepeatedAtOneCallSiteIsOneFindingWithACount) {
  CheckRegistry registry;
  ASSERT_TRUE(registry.Add(std::make_unique<RepeatingCheck>(100000)).ok());
  Environment env;
  CheckInputs inputs;
  inputs.Add(env);
  const CheckRun run = RunChecks(registry, *CheckSelection::Parse(""), CheckOptions(), inputs);
  // The repeated one folded with its count; the two without a call site stay apart.
  ASSERT_EQ(run.findings.size(), 3u);
  EXPECT_EQ(run.findings[0].where.api, "cudaStreamSynchronize");
  EXPECT_EQ(run.findings[0].occurrences, 100000u);
  EXPECT_EQ(run.findings[1].message, "records were lost");
  EXPECT_EQ(run.findings[1].occurrences, 1u);
  EXPECT_EQ(run.findings[2].message, "the trace was cut short");
}

TEST(CheckSelectionTest, SelectionsOfNoCheckAreTold) {
  const CheckRegistry registry = MakeRegistry();
  for (const char* none : {"nonexistent-*", "-*", "env-*,-env-*"}) {
    EXPECT_FALSE(CheckSelection::Parse(none)->SelectsAnyOf(registry)) << none;
  }
  for (const char* some : {"", "*", "env-*", "-env-*"}) {
    EXPECT_TRUE(CheckSelection::Parse(some)->SelectsAnyOf(registry)) << some;
  }
}

TEST(RunChecksTest, ChecksWithoutTheirInputDoNotRun) {
  CheckRegistry registry = MakeRegistry();
  CheckRun run = RunChecks(registry, *CheckSelection::Parse(""), CheckOptions(), CheckInputs{});
  EXPECT_TRUE(run.checks_run.empty());
  EXPECT_TRUE(run.findings.empty());
}

TEST(SeverityTest, ParsesNamesAndRejectsOthers) {
  EXPECT_EQ(*ParseSeverity("warning"), Severity::kWarning);
  EXPECT_EQ(SeverityName(Severity::kError), "error");
  EXPECT_FALSE(ParseSeverity("fatal").ok());
}

}  // namespace
}  // namespace graphcheck
