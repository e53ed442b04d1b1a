#include "checks/checks.h"

#include "tests/checks/config/config_check_test_util.h"

namespace graphcheck::checks {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testing_util::FindingAt;
using testing_util::RunConfigCheck;

TEST(ConfigMoeScopeDroplessTest, FlagsMoeScopeOnDroplessRouting) {
  EXPECT_THAT(RunConfigCheck(*NewConfigMoeScopeDroplessCheck(), R"(model:
  cuda_graph_impl: transformer_engine
  num_moe_experts: 8
  moe_expert_capacity_factor: null
  cuda_graph_scope: [attn, moe]
)"),
              ElementsAre(FindingAt("config-moe-scope-dropless", "train.yaml", 5, "model.cuda_graph_scope")));
}

TEST(ConfigMoeScopeDroplessTest, AcceptsDropAndPad) {
  EXPECT_THAT(RunConfigCheck(*NewConfigMoeScopeDroplessCheck(), R"(model:
  cuda_graph_impl: transformer_engine
  num_moe_experts: 8
  moe_expert_capacity_factor: 1.0
  moe_pad_expert_input_to_capacity: true
  cuda_graph_scope: [attn, moe]
)"),
              IsEmpty());
}

TEST(ConfigMoeScopeDroplessTest, RouterScopeIsFineOnDroplessRouting) {
  EXPECT_THAT(RunConfigCheck(*NewConfigMoeScopeDroplessCheck(), R"(model:
  cuda_graph_impl: transformer_engine
  num_moe_experts: 8
  cuda_graph_scope: [attn, moe_router, moe_preprocess]
)"),
              IsEmpty());
}

}  // namespace
}  // namespace graphcheck::checks
