// JSON configurations: keys with line and column, malformed input.
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

TEST(JsonConfigReaderTest, JsonKeysCarryLineAndColumn) {
  absl::StatusOr<ConfigDocument> document = ParseConfigText(
      "{\"model\": {\"cuda_graph_impl\": \"local\",\n  \"cuda_graph_warmup_steps\": 3,\n  \"x\": null,\n"
      "  \"scope\": [\"attn\", \"mlp\"], \"layers\": [{\"k\": 1.5}]}}",
      "a.json", ConfigFormat::kJson);
  ASSERT_TRUE(document.ok()) << document.status();
  const ConfigEntry* impl = document->Find("model.cuda_graph_impl");
  ASSERT_NE(impl, nullptr);
  EXPECT_EQ(impl->position.line, 1);
  EXPECT_EQ(impl->position.column, 12);
  EXPECT_EQ(impl->values[0].position.column, 31);
  const ConfigEntry* warmup = document->Find("model.cuda_graph_warmup_steps");
  ASSERT_NE(warmup, nullptr);
  EXPECT_EQ(warmup->position.line, 2);
  EXPECT_EQ(warmup->values[0].text, "3");
  EXPECT_EQ(warmup->values[0].position.column, 30);
  ASSERT_NE(document->Find("model.x"), nullptr);
  EXPECT_EQ(document->Find("model.x")->kind, ConfigEntry::Kind::kNull);
  ASSERT_NE(document->Find("model.scope"), nullptr);
  EXPECT_THAT(Texts(*document->Find("model.scope")), ElementsAre("attn", "mlp"));
  ASSERT_NE(document->Find("model.layers.0.k"), nullptr);
  EXPECT_EQ(document->Find("model.layers.0.k")->values[0].text, "1.5");
}

TEST(JsonConfigReaderTest, MalformedJsonNamesLineAndColumn) {
  absl::StatusOr<ConfigDocument> document =
      ParseConfigText("{\n  \"model\": {\n    \"cuda_graph_impl\": local\n  }\n}", "bad.json", ConfigFormat::kJson);
  ASSERT_FALSE(document.ok());
  EXPECT_THAT(std::string(document.status().message()), HasSubstr("bad.json:3:24: "));
  EXPECT_THAT(std::string(document.status().message()), HasSubstr("invalid literal"));
}

}  // namespace
}  // namespace graphcheck::checks
