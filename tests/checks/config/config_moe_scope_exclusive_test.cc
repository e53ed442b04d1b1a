#include "checks/checks.h"

#include "tests/checks/config/config_check_test_util.h"

namespace graphcheck::checks {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testing_util::FindingAt;
using testing_util::RunConfigCheck;

TEST(ConfigMoeScopeExclusiveTest, FlagsMoeWithMoeRouter) {
  EXPECT_THAT(RunConfigCheck(*NewConfigMoeScopeExclusiveCheck(), R"(model:
  cuda_graph_impl: transformer_engine
  num_moe_experts: 8
  cuda_graph_scope:
    - moe
    - moe_router
)"),
              ElementsAre(FindingAt("config-moe-scope-exclusive", "train.yaml", 6, "model.cuda_graph_scope")));
}

TEST(ConfigMoeScopeExclusiveTest, AcceptsRouterWithPreprocess) {
  EXPECT_THAT(RunConfigCheck(*NewConfigMoeScopeExclusiveCheck(), R"(model:
  cuda_graph_impl: transformer_engine
  cuda_graph_scope: [attn, moe_router, moe_preprocess]
)"),
              IsEmpty());
}

}  // namespace
}  // namespace graphcheck::checks
