// Tests of .graphcheck.yaml: every setting is read, and every mistake is an error naming file, line and column.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cli/catalog.h"
#include "cli/common.h"
#include "cli/config_file.h"

namespace graphcheck {
namespace {

using ::testing::HasSubstr;

absl::StatusOr<ConfigFile> Parse(const std::string& text) {
  return ParseConfigFile("repo/.graphcheck.yaml", text, BuiltinChecks());
}

TEST(ConfigFileTest, ReadsEverySetting) {
  absl::StatusOr<ConfigFile> config = Parse(R"(version: 1
checks: ["env-*", "-env-launch-blocking"]
severity:
  env-no-caching-allocator: error
  "sync-*": note
options:
  launch-bound:
    graph-launch-us: 4
tolerances:
  bfloat16: 0.05
max-regression:
  graphed.speedup: 5%
fail-on: warning
)");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->checks, "env-*,-env-launch-blocking");
  ASSERT_EQ(config->severities.size(), 2u);
  EXPECT_EQ(config->severities[0].glob, "env-no-caching-allocator");
  EXPECT_EQ(config->severities[0].severity, Severity::kError);
  ASSERT_NE(config->check_options.Find("launch-bound", "graph-launch-us"), nullptr);
  EXPECT_EQ(*config->check_options.Find("launch-bound", "graph-launch-us"), "4");
  for (const char* id : {"numerics-forward", "numerics-grad", "numerics-loss", "state-elided"}) {
    ASSERT_NE(config->check_options.Find(id, "rtol-bfloat16"), nullptr) << id;
  }
  ASSERT_EQ(config->thresholds.size(), 1u);
  EXPECT_DOUBLE_EQ(config->thresholds[0].max_ratio, 0.05);
  EXPECT_EQ(config->fail_on, "warning");
}

TEST(ConfigFileTest, ErrorsNameFileLineAndColumn) {
  const std::pair<const char*, const char*> cases[] = {
      {"fail-on: error\nchekcs: [env-*]\n", "repo/.graphcheck.yaml:2:1: unknown key 'chekcs'"},
      {"severity:\n  no-such-check: error\n", "repo/.graphcheck.yaml:2:3: unknown check id 'no-such-check'"},
      {"severity:\n  env-launch-blocking: fatal\n", "repo/.graphcheck.yaml:2:24: severity 'fatal'"},
      {"options:\n  launch-bound:\n    no-option: 1\n",
       "repo/.graphcheck.yaml:3:5: check 'launch-bound' has no option"},
      {"options:\n  launch-bound:\n    graph-launch-us: fast\n", "repo/.graphcheck.yaml:3:5: option launch-bound"},
      {"fail-on: error\nfail-on: never\n", "repo/.graphcheck.yaml:2:1: key 'fail-on' is given twice"},
      {"checks: [env-*, -nope]\n", "repo/.graphcheck.yaml:1:17: unknown check id 'nope'"},
      {"tolerances:\n  float8: 1\n", "repo/.graphcheck.yaml:2:3: no check has a tolerance for 'float8'"},
      {"max-regression:\n  graphed.speedup: lots\n",
       "repo/.graphcheck.yaml:2:20: max-regression 'graphed.speedup=lots'"},
      {"max-regression:\n  graphed.speedup: nan\n", "repo/.graphcheck.yaml:2:20: max-regression 'graphed.speedup=nan'"},
      {"max-regression:\n  graphed.speedup: .inf\n", "a finite PERCENT"},
      {"max-regression:\n  graphed.speedup: 1e999\n", "a finite PERCENT"},
      {"checks: \"\"\n", "repo/.graphcheck.yaml:1:9: checks selects no check"},
      {"checks: \",,,\"\n", "repo/.graphcheck.yaml:1:9: checks selects no check"},
      {"checks: [\"-*\"]\n", "repo/.graphcheck.yaml:1:9: checks '-*' selects no check"},
      {"checks: [unclosed\n", "repo/.graphcheck.yaml:"},
      {"- a list\n", "repo/.graphcheck.yaml:1:1: the configuration must be a mapping"},
  };
  for (const auto& [text, error] : cases) {
    absl::StatusOr<ConfigFile> config = Parse(text);
    ASSERT_FALSE(config.ok()) << text;
    EXPECT_THAT(config.status().message(), HasSubstr(error)) << text;
    EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  }
}

TEST(ConfigFileTest, AnEmptyFileChangesNothing) {
  absl::StatusOr<ConfigFile> config = Parse("");
  ASSERT_TRUE(config.ok());
  EXPECT_TRUE(config->checks.empty() && config->severities.empty() && config->fail_on.empty());
}

}  // namespace
}  // namespace graphcheck
