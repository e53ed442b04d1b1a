#include "validators/config/config_parser.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "validators/config/config_keys.h"

namespace graphcheck {
namespace {

using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::HasSubstr;

std::vector<std::string> Texts(const ConfigEntry& entry) {
  std::vector<std::string> texts;
  for (const ConfigScalar& value : entry.values) texts.push_back(value.text);
  return texts;
}

TEST(ConfigParserTest, YamlKeysCarryLineAndColumn) {
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

TEST(ConfigParserTest, JsonKeysCarryLineAndColumn) {
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

TEST(ConfigParserTest, MalformedYamlNamesLineAndColumn) {
  absl::StatusOr<ConfigDocument> document =
      ParseConfigText("model:\n  cuda_graph_impl: [local\n  x: 1\n", "bad.yaml", ConfigFormat::kYaml);
  ASSERT_FALSE(document.ok());
  EXPECT_EQ(document.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(document.status().message()), ::testing::MatchesRegex("bad\\.yaml:[0-9]+:[0-9]+: .+"));
}

TEST(ConfigParserTest, MalformedJsonNamesLineAndColumn) {
  absl::StatusOr<ConfigDocument> document =
      ParseConfigText("{\n  \"model\": {\n    \"cuda_graph_impl\": local\n  }\n}", "bad.json", ConfigFormat::kJson);
  ASSERT_FALSE(document.ok());
  EXPECT_THAT(std::string(document.status().message()), HasSubstr("bad.json:3:24: "));
  EXPECT_THAT(std::string(document.status().message()), HasSubstr("invalid literal"));
}

TEST(ConfigParserTest, TopLevelMustBeAMapping) {
  EXPECT_FALSE(ParseConfigText("- a\n- b\n", "l.yaml", ConfigFormat::kYaml).ok());
  EXPECT_FALSE(ParseConfigText("[1, 2]", "l.json", ConfigFormat::kJson).ok());
  EXPECT_FALSE(ParseConfigText("3", "l.json", ConfigFormat::kJson).ok());
  EXPECT_TRUE(ParseConfigText("", "empty.yaml", ConfigFormat::kYaml).ok());
}

TEST(ConfigParserTest, AliasBombIsRejectedNotExpanded) {
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

TEST(ConfigParserTest, ArgumentsFileReadsFlagsValuesAndEnvironment) {
  absl::StatusOr<ConfigDocument> document = ParseConfigText(
      "# launch\nexport NCCL_GRAPH_REGISTER=0\nPYTORCH_CUDA_ALLOC_CONF='expandable_segments:True' torchrun \\\n"
      "  pretrain_gpt.py --cuda-graph-impl transformer_engine \\\n  --cuda-graph-scope attn \"moe_router\" \\\n"
      "  --te-rng-tracker --lr=-1.5e-4 --seed -3\n",
      "run.sh", ConfigFormat::kArgs);
  ASSERT_TRUE(document.ok());
  EXPECT_EQ(document->dialect(), ConfigDialect::kMcoreArgs);
  const ConfigEntry* impl = document->Find("--cuda-graph-impl");
  ASSERT_NE(impl, nullptr);
  EXPECT_EQ(impl->position.line, 4);
  EXPECT_EQ(impl->position.column, 19);
  EXPECT_THAT(Texts(*document->Find("--cuda-graph-scope")), ElementsAre("attn", "moe_router"));
  EXPECT_EQ(document->Find("--te-rng-tracker")->kind, ConfigEntry::Kind::kFlag);
  EXPECT_THAT(Texts(*document->Find("--lr")), ElementsAre("-1.5e-4"));
  EXPECT_THAT(Texts(*document->Find("--seed")), ElementsAre("-3"));
  EXPECT_EQ(*document->environment().variables.Get("NCCL_GRAPH_REGISTER"), "0");
  EXPECT_EQ(*document->environment().variables.Get("PYTORCH_CUDA_ALLOC_CONF"), "expandable_segments:True");
  EXPECT_EQ(document->environment().positions.at("PYTORCH_CUDA_ALLOC_CONF").line, 3);
}

TEST(ConfigParserTest, CommandLineArgumentsHaveNoLines) {
  ConfigDocument document = ParseArgumentList({"--cuda-graph-impl", "local", "--no-check-for-nan-in-loss-and-grad"});
  EXPECT_EQ(document.file(), "<command line>");
  const Setting nan_check = Lookup(document, config_keys::kCheckForNanInLoss);
  EXPECT_EQ(nan_check.AsBool(), false);
  EXPECT_EQ(nan_check.key, "--no-check-for-nan-in-loss-and-grad");
  EXPECT_EQ(Lookup(document, config_keys::kCudaGraphImpl).AsString(), "local");
}

TEST(ConfigParserTest, LookupFallsBackToTheDialectsDefault) {
  absl::StatusOr<ConfigDocument> bridge = ParseConfigText("model: {}\n", "a.yaml", ConfigFormat::kYaml);
  ASSERT_TRUE(bridge.ok());
  const Setting loss = Lookup(*bridge, config_keys::kCheckForNanInLoss);
  EXPECT_FALSE(loss.is_set());
  EXPECT_EQ(loss.AsBool(), true);
  EXPECT_EQ(loss.key, "rerun_state_machine.check_for_nan_in_loss");
  EXPECT_FALSE(Lookup(ParseArgumentList({}), config_keys::kRngTeRngTracker).applicable);
}

TEST(ConfigParserTest, FormatFollowsTheExtension) {
  EXPECT_EQ(ConfigFormatForPath("a/b.YAML"), ConfigFormat::kYaml);
  EXPECT_EQ(ConfigFormatForPath("b.yml"), ConfigFormat::kYaml);
  EXPECT_EQ(ConfigFormatForPath("b.json"), ConfigFormat::kJson);
  EXPECT_EQ(ConfigFormatForPath("run.sh"), ConfigFormat::kArgs);
}

}  // namespace
}  // namespace graphcheck
