#include "checks/checks.h"

#include "tests/checks/config/config_check_test_util.h"

namespace graphcheck::checks {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testing_util::FindingAt;
using testing_util::RunConfigCheck;

TEST(ConfigMoePreprocessRequiresRouterTest, FlagsPreprocessAlone) {
  EXPECT_THAT(
      RunConfigCheck(*NewConfigMoePreprocessRequiresRouterCheck(), R"(model:
  cuda_graph_impl: transformer_engine
  cuda_graph_scope: [attn, moe_preprocess]
)"),
      ElementsAre(FindingAt("config-moe-preprocess-requires-router", "train.yaml", 3, "model.cuda_graph_scope")));
}

TEST(ConfigMoePreprocessRequiresRouterTest, AcceptsPreprocessWithRouter) {
  EXPECT_THAT(RunConfigCheck(*NewConfigMoePreprocessRequiresRouterCheck(), R"(model:
  cuda_graph_impl: transformer_engine
  cuda_graph_scope: [moe_router, moe_preprocess]
)"),
              IsEmpty());
}

TEST(ConfigMoePreprocessRequiresRouterTest, MegatronArgumentsPointAtTheScopeWord) {
  const std::vector<Finding> findings = RunConfigCheck(
      *NewConfigMoePreprocessRequiresRouterCheck(),
      "--cuda-graph-impl transformer_engine\n--cuda-graph-scope attn moe_preprocess\n", ConfigFormat::kArgs);
  ASSERT_THAT(findings,
              ElementsAre(FindingAt("config-moe-preprocess-requires-router", "launch.sh", 2, "--cuda-graph-scope")));
  EXPECT_EQ(findings[0].where.column, 25);
}

}  // namespace
}  // namespace graphcheck::checks
