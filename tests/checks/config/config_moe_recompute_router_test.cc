#include "checks/checks.h"

#include "tests/checks/config/config_check_test_util.h"

namespace graphcheck::checks {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testing_util::FindingAt;
using testing_util::RunConfigCheck;

TEST(ConfigMoeRecomputeRouterTest, FlagsMoeRecomputeWithRouterScope) {
  const std::vector<Finding> findings = RunConfigCheck(*NewConfigMoeRecomputeRouterCheck(), R"(model:
  cuda_graph_impl: transformer_engine
  num_moe_experts: 8
  cuda_graph_scope: [attn, moe_router]
  recompute_granularity: selective
  recompute_modules: [core_attn, moe]
)");
  ASSERT_THAT(findings,
              ElementsAre(FindingAt("config-moe-recompute-router", "train.yaml", 6, "model.recompute_modules")));
  EXPECT_EQ(findings[0].where.column, 34);
}

TEST(ConfigMoeRecomputeRouterTest, AcceptsOtherRecomputeModules) {
  EXPECT_THAT(RunConfigCheck(*NewConfigMoeRecomputeRouterCheck(), R"(model:
  cuda_graph_impl: transformer_engine
  cuda_graph_scope: [attn, moe_router]
  recompute_granularity: selective
  recompute_modules: [core_attn, moe_act]
)"),
              IsEmpty());
}

TEST(ConfigMoeRecomputeRouterTest, OnlyTheTransformerEngineImplementationIsAffected) {
  EXPECT_THAT(RunConfigCheck(*NewConfigMoeRecomputeRouterCheck(),
                             "--cuda-graph-impl local --cuda-graph-scope moe_router "
                             "--recompute-granularity selective --recompute-modules moe",
                             ConfigFormat::kArgs),
              IsEmpty());
  EXPECT_THAT(RunConfigCheck(*NewConfigMoeRecomputeRouterCheck(),
                             "--cuda-graph-impl transformer_engine --cuda-graph-scope moe_router "
                             "--recompute-granularity selective --recompute-modules moe",
                             ConfigFormat::kArgs),
              ElementsAre(FindingAt("config-moe-recompute-router", "launch.sh", 1, "--recompute-modules")));
}

}  // namespace
}  // namespace graphcheck::checks
