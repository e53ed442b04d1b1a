#include "checks/checks.h"

#include "tests/checks/config/config_check_test_util.h"

namespace graphcheck::checks {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing_util::FindingAt;
using testing_util::RunConfigCheck;

TEST(ConfigFullIterationImplTest, FlagsFullIterationWithTransformerEngine) {
  const std::vector<Finding> findings = RunConfigCheck(*NewConfigFullIterationImplCheck(), R"(model:
  cuda_graph_impl: transformer_engine
  cuda_graph_scope: [full_iteration]
)");
  ASSERT_THAT(findings, ElementsAre(FindingAt("config-full-iteration-impl", "train.yaml", 2, "model.cuda_graph_impl")));
  EXPECT_THAT(findings[0].fix, HasSubstr("set model.cuda_graph_impl: local"));
}

TEST(ConfigFullIterationImplTest, FlagsFullIterationWithOtherScopesAtTheScopeItem) {
  const std::vector<Finding> findings = RunConfigCheck(*NewConfigFullIterationImplCheck(), R"(model:
  cuda_graph_impl: local
  cuda_graph_scope:
    - attn
    - full_iteration
)");
  ASSERT_THAT(findings,
              ElementsAre(FindingAt("config-full-iteration-impl", "train.yaml", 5, "model.cuda_graph_scope")));
  EXPECT_EQ(findings[0].where.column, 7);
  EXPECT_THAT(findings[0].message, HasSubstr("attn"));
}

TEST(ConfigFullIterationImplTest, AcceptsLocalFullIterationAlone) {
  EXPECT_THAT(RunConfigCheck(*NewConfigFullIterationImplCheck(), R"(model:
  cuda_graph_impl: local
  cuda_graph_scope: [full_iteration]
)"),
              IsEmpty());
}

TEST(ConfigFullIterationImplTest, ReadsJson) {
  const std::vector<Finding> findings = RunConfigCheck(*NewConfigFullIterationImplCheck(), R"({
  "model": {
    "cuda_graph_impl": "transformer_engine",
    "cuda_graph_scope": ["full_iteration"]
  }
})",
                                                       ConfigFormat::kJson);
  ASSERT_THAT(findings, ElementsAre(FindingAt("config-full-iteration-impl", "train.json", 3, "model.cuda_graph_impl")));
  EXPECT_EQ(findings[0].where.column, 5);
}

// Megatron Core 0.19's full_iteration implementation with the older full_iteration scope, which it migrates: not the
// wrong implementation.
TEST(ConfigFullIterationImplTest, AcceptsTheFullIterationImplementation) {
  EXPECT_THAT(RunConfigCheck(*NewConfigFullIterationImplCheck(),
                             "--cuda-graph-impl full_iteration --cuda-graph-scope full_iteration", ConfigFormat::kArgs),
              IsEmpty());
}

}  // namespace
}  // namespace graphcheck::checks
