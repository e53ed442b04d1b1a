#include "checks/checks.h"

#include "tests/checks/config/config_check_test_util.h"

namespace graphcheck::checks {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing_util::FindingAt;
using testing_util::RunConfigCheck;

TEST(ConfigUnknownCudaGraphValueTest, FlagsTyposWithSuggestions) {
  const std::vector<Finding> findings = RunConfigCheck(*NewConfigUnknownCudaGraphValueCheck(), R"(model:
  cuda_graph_impl: transformer-engine
  cuda_graph_scope: [attn, moe_routr]
  cuda_graph_warmup_steps: -1
)");
  ASSERT_THAT(
      findings,
      ElementsAre(FindingAt("config-unknown-cuda-graph-value", "train.yaml", 2, "model.cuda_graph_impl"),
                  FindingAt("config-unknown-cuda-graph-value", "train.yaml", 3, "model.cuda_graph_scope"),
                  FindingAt("config-unknown-cuda-graph-value", "train.yaml", 4, "model.cuda_graph_warmup_steps")));
  EXPECT_THAT(findings[0].message, HasSubstr("Did you mean transformer_engine?"));
  EXPECT_THAT(findings[1].message, HasSubstr("Did you mean moe_router?"));
  EXPECT_EQ(findings[1].where.column, 28);
}

TEST(ConfigUnknownCudaGraphValueTest, AcceptsKnownNames) {
  EXPECT_THAT(RunConfigCheck(*NewConfigUnknownCudaGraphValueCheck(), R"(model:
  cuda_graph_impl: transformer_engine
  cuda_graph_scope: [attn, mlp, moe_router, moe_preprocess, mamba]
  cuda_graph_warmup_steps: 3
)"),
              IsEmpty());
}

// Megatron Core 0.19's full_iteration implementation (its run on an H200 trained), with and without the deprecated
// full_iteration scope it migrates.
TEST(ConfigUnknownCudaGraphValueTest, AcceptsTheFullIterationImplementation) {
  EXPECT_THAT(
      RunConfigCheck(*NewConfigUnknownCudaGraphValueCheck(), "--cuda-graph-impl full_iteration", ConfigFormat::kArgs),
      IsEmpty());
}

}  // namespace
}  // namespace graphcheck::checks
