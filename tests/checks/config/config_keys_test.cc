// Settings looked up in either dialect, their values, and how a fix is worded in the file's own dialect.
#include "checks/config/config_keys.h"

#include <gtest/gtest.h>

#include "checks/config/config_parser.h"

namespace graphcheck::checks {
namespace {

TEST(ConfigKeysTest, ReadsBridgeValuesAndWordsFixesInYaml) {
  absl::StatusOr<ConfigDocument> doc =
      ParseConfigText("model:\n  cuda_graph_impl: local\n  cpu_offloading: yes\n", "a.yaml", ConfigFormat::kYaml);
  ASSERT_TRUE(doc.ok()) << doc.status();
  const Setting impl = Lookup(*doc, config_keys::kCudaGraphImpl);
  EXPECT_TRUE(impl.is_set());
  EXPECT_EQ(impl.AsString(), "local");
  EXPECT_EQ(Lookup(*doc, config_keys::kCpuOffloading).AsBool(), true);
  EXPECT_EQ(impl.Where(*doc).line, 2);
  EXPECT_EQ(HowToSet(*doc, config_keys::kCpuOffloading, "false"), "set model.cpu_offloading: false");
}

TEST(ConfigKeysTest, ReadsMegatronFlagsAndWordsFixesAsFlags) {
  const ConfigDocument doc =
      ParseArgumentList({"--cuda-graph-impl", "transformer_engine", "--cuda-graph-warmup-steps", "3"});
  EXPECT_EQ(Lookup(doc, config_keys::kCudaGraphImpl).AsString(), "transformer_engine");
  EXPECT_EQ(Lookup(doc, config_keys::kCudaGraphWarmupSteps).AsNumber(), 3.0);
  EXPECT_EQ(HowToSet(doc, config_keys::kCudaGraphImpl, "local"), "pass --cuda-graph-impl local");
}

}  // namespace
}  // namespace graphcheck::checks
