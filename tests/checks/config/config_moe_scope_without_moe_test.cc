#include "checks/checks.h"

#include "tests/checks/config/config_check_test_util.h"

namespace graphcheck::checks {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing_util::FindingAt;
using testing_util::RunConfigCheck;

TEST(ConfigMoeScopeWithoutMoeTest, FlagsMoeScopesOnADenseModel) {
  const std::vector<Finding> findings = RunConfigCheck(*NewConfigMoeScopeWithoutMoeCheck(), R"(model:
  cuda_graph_impl: transformer_engine
  cuda_graph_scope:
    - attn
    - moe_router
    - moe_preprocess
)");
  ASSERT_THAT(findings,
              ElementsAre(FindingAt("config-moe-scope-without-moe", "train.yaml", 5, "model.cuda_graph_scope")));
  EXPECT_THAT(findings[0].message, HasSubstr("moe_router, moe_preprocess"));
}

TEST(ConfigMoeScopeWithoutMoeTest, AcceptsMoeScopesOnAnMoeModel) {
  EXPECT_THAT(RunConfigCheck(*NewConfigMoeScopeWithoutMoeCheck(), R"(model:
  cuda_graph_impl: transformer_engine
  num_moe_experts: 64
  cuda_graph_scope: [attn, moe_router]
)"),
              IsEmpty());
}

TEST(ConfigMoeScopeWithoutMoeTest, NullExpertCountIsDense) {
  EXPECT_THAT(RunConfigCheck(*NewConfigMoeScopeWithoutMoeCheck(), R"(model:
  cuda_graph_impl: transformer_engine
  num_moe_experts: null
  cuda_graph_scope: [moe]
)"),
              ElementsAre(FindingAt("config-moe-scope-without-moe", "train.yaml", 4, "model.cuda_graph_scope")));
}

}  // namespace
}  // namespace graphcheck::checks
