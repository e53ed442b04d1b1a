// YAML configurations: keys with line and column, malformed input, hostile documents.
#include "checks/config/config_parser.h"

#include "checks/config/config_keys.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/checks/config/config_check_test_util.h"

namespace graphcheck::checks {
namespace {

using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::HasSubstr;
using testing_util::Texts;

TEST(YamlConfigReaderTest, YamlKeysCarryLineAndColumn) {
  absl::StatusOr<ConfigDocument> document = ParseConfigText(R"(model:
  cuda_graph_impl: local
  cuda_graph_scope:
  - full_iteration
rng: {te_rng_tracker: true}
)",
                                                            "a.yaml", ConfigFormat::kYaml);
  ASSERT_TRUE(document.ok()) << document.status();
  EXPECT_EQ(document->dialect(), ConfigDialect::kBridge);
  const ConfigEntry* impl = document->Find("model.cuda_graph_impl");
  ASSERT_NE(impl, nullptr);
  EXPECT_EQ(impl->position.line, 2);
  EXPECT_EQ(impl->position.column, 3);
  EXPECT_EQ(impl->values[0].position.column, 20);
  const ConfigEntry* scope = document->Find("model.cuda_graph_scope");
  ASSERT_NE(scope, nullptr);
  EXPECT_EQ(scope->kind, ConfigEntry::Kind::kList);
  EXPECT_THAT(Texts(*scope), ElementsAre("full_iteration"));
  EXPECT_EQ(scope->values[0].position.line, 4);
  const ConfigEntry* rng = document->Find("rng.te_rng_tracker");
  ASSERT_NE(rng, nullptr);
  EXPECT_EQ(rng->position.line, 5);
}

TEST(YamlConfigReaderTest, MalformedYamlNamesLineAndColumn) {
  absl::StatusOr<ConfigDocument> document =
      ParseConfigText("model:\n  cuda_graph_impl: [local\n  x: 1\n", "bad.yaml", ConfigFormat::kYaml);
  ASSERT_FALSE(document.ok());
  EXPECT_EQ(document.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(document.status().message()), ::testing::MatchesRegex("bad\\.yaml:[0-9]+:[0-9]+: .+"));
}

// yaml-cpp accepts these; a configuration must not: the value read would not be the one written.
TEST(YamlConfigReaderTest, UnclosedQuotesDuplicateKeysAndDeepNestingAreErrorsWithPositions) {
  for (const auto& [text, message] : std::vector<std::pair<std::string, std::string>>{
           {"cuda_graph_impl: \"local\n", "q.yaml:1:18: quoted scalar is never closed"},
           {"cuda_graph_impl: 'local\n", "q.yaml:1:18: quoted scalar is never closed"},
           {"model:\n  a: 1\n  a: 2\n", "q.yaml:3:3: duplicate key 'a'"},
           {"a: " + std::string(100, '[') + std::string(100, ']') + "\n", "q.yaml:1:68: nesting is too deep"},
       }) {
    absl::StatusOr<ConfigDocument> document = ParseConfigText(text, "q.yaml", ConfigFormat::kYaml);
    ASSERT_FALSE(document.ok()) << text;
    EXPECT_THAT(std::string(document.status().message()), ::testing::HasSubstr(message)) << text;
  }
  // Quotes that close, escaped quotes inside them, and brackets inside quotes or comments are fine.
  for (const std::string text : {"a: \"lo\\\"cal\"\n", "a: 'it''s'\n", "a: \"[[[[\" # [[[[\n", "a: 1\nb: 1\n"}) {
    EXPECT_TRUE(ParseConfigText(text, "ok.yaml", ConfigFormat::kYaml).ok()) << text;
  }
}

TEST(YamlConfigReaderTest, TopLevelMustBeAMapping) {
  EXPECT_FALSE(ParseConfigText("- a\n- b\n", "l.yaml", ConfigFormat::kYaml).ok());
  EXPECT_FALSE(ParseConfigText("[1, 2]", "l.json", ConfigFormat::kJson).ok());
  EXPECT_FALSE(ParseConfigText("3", "l.json", ConfigFormat::kJson).ok());
  EXPECT_TRUE(ParseConfigText("", "empty.yaml", ConfigFormat::kYaml).ok());
}

TEST(YamlConfigReaderTest, AliasBombIsRejectedNotExpanded) {
  std::string text = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 9; ++i) {
    text += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int j = 0; j < 10; ++j) text += std::string(j ? ", " : "") + "*a" + std::to_string(i - 1);
    text += "]\n";
  }
  absl::StatusOr<ConfigDocument> document = ParseConfigText(text, "bomb.yaml", ConfigFormat::kYaml);
  ASSERT_FALSE(document.ok());
  EXPECT_THAT(std::string(document.status().message()), HasSubstr("too large"));
}

}  // namespace
}  // namespace graphcheck::checks
