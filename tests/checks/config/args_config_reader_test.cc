// Megatron Core flags from a file or the command line, and the environment words of a launch script.
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

TEST(ArgsConfigReaderTest, ArgumentsFileReadsFlagsValuesAndEnvironment) {
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

TEST(ArgsConfigReaderTest, CommandLineArgumentsHaveNoLines) {
  ConfigDocument document = ParseArgumentList({"--cuda-graph-impl", "local", "--no-check-for-nan-in-loss-and-grad"});
  EXPECT_EQ(document.file(), "<command line>");
  const Setting nan_check = Lookup(document, config_keys::kCheckForNanInLoss);
  EXPECT_EQ(nan_check.AsBool(), false);
  EXPECT_EQ(nan_check.key, "--no-check-for-nan-in-loss-and-grad");
  EXPECT_EQ(Lookup(document, config_keys::kCudaGraphImpl).AsString(), "local");
}

}  // namespace
}  // namespace graphcheck::checks
