#include "checks/checks.h"

#include "tests/checks/config/config_check_test_util.h"

namespace graphcheck::checks {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testing_util::FindingAt;
using testing_util::RunConfigCheck;

constexpr char kDelayedWithBias[] = R"(model:
  cuda_graph_impl: transformer_engine
  cuda_graph_scope: [attn]
  delay_wgrad_compute: true
  gradient_accumulation_fusion: false
  add_bias_linear: true
  add_qkv_bias: false
)";

TEST(ConfigDelayedWgradTest, FlagsFusionOffAndBiasOn) {
  EXPECT_THAT(RunConfigCheck(*NewConfigDelayedWgradCheck(), kDelayedWithBias),
              ElementsAre(FindingAt("config-delayed-wgrad", "train.yaml", 5, "model.gradient_accumulation_fusion"),
                          FindingAt("config-delayed-wgrad", "train.yaml", 6, "model.add_bias_linear")));
}

TEST(ConfigDelayedWgradTest, FlagsOldTransformerEngineWhenTheVersionIsGiven) {
  CheckOptions options;
  options.Set("config-delayed-wgrad", "te-version", "2.10.0");
  const std::vector<Finding> findings = RunConfigCheck(*NewConfigDelayedWgradCheck(), R"(comm_overlap:
  delay_wgrad_compute: true
model:
  cuda_graph_impl: transformer_engine
  cuda_graph_scope: [moe_router]
  gradient_accumulation_fusion: true
)",
                                                       ConfigFormat::kYaml, options);
  EXPECT_THAT(findings,
              ElementsAre(FindingAt("config-delayed-wgrad", "train.yaml", 2, "comm_overlap.delay_wgrad_compute")));
  options.Set("config-delayed-wgrad", "te-version", "2.12");
  EXPECT_THAT(RunConfigCheck(*NewConfigDelayedWgradCheck(), R"(comm_overlap:
  delay_wgrad_compute: true
model:
  cuda_graph_impl: transformer_engine
  cuda_graph_scope: [moe_router]
)",
                             ConfigFormat::kYaml, options),
              IsEmpty());
}

TEST(ConfigDelayedWgradTest, AcceptsFusionOnAndNoBias) {
  EXPECT_THAT(RunConfigCheck(*NewConfigDelayedWgradCheck(), R"(model:
  cuda_graph_impl: transformer_engine
  cuda_graph_scope: [attn]
  delay_wgrad_compute: true
  gradient_accumulation_fusion: true
  add_bias_linear: false
  add_qkv_bias: false
)"),
              IsEmpty());
}

TEST(ConfigDelayedWgradTest, IgnoresScopesWithoutAttentionOrRouter) {
  EXPECT_THAT(RunConfigCheck(*NewConfigDelayedWgradCheck(), R"(model:
  cuda_graph_impl: transformer_engine
  cuda_graph_scope: [mlp]
  delay_wgrad_compute: true
  gradient_accumulation_fusion: false
)"),
              IsEmpty());
}

}  // namespace
}  // namespace graphcheck::checks
