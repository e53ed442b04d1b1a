#include "checks/checks.h"

#include "tests/checks/config/config_check_test_util.h"

namespace graphcheck::checks {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing_util::FindingAt;
using testing_util::RunConfigCheck;

TEST(ConfigTeRngTrackerTest, FlagsTrackerOffAtItsLine) {
  const std::vector<Finding> findings = RunConfigCheck(*NewConfigTeRngTrackerCheck(), R"(model:
  cuda_graph_impl: transformer_engine
  use_te_rng_tracker: false
rng:
  te_rng_tracker: true
)");
  ASSERT_THAT(findings, ElementsAre(FindingAt("config-te-rng-tracker", "train.yaml", 3, "model.use_te_rng_tracker")));
  EXPECT_THAT(findings[0].fix, HasSubstr("set model.use_te_rng_tracker: true"));
  EXPECT_THAT(findings[0].evidence, ::testing::Contains(HasSubstr("model.cuda_graph_impl: transformer_engine")));
}

TEST(ConfigTeRngTrackerTest, MissingRngSwitchPointsAtTheImplementationLine) {
  const std::vector<Finding> findings = RunConfigCheck(*NewConfigTeRngTrackerCheck(), R"(model:
  use_te_rng_tracker: true
  cuda_graph_impl: local
)");
  EXPECT_THAT(findings, ElementsAre(FindingAt("config-te-rng-tracker", "train.yaml", 3, "rng.te_rng_tracker")));
}

TEST(ConfigTeRngTrackerTest, AcceptsBothSwitchesOn) {
  EXPECT_THAT(RunConfigCheck(*NewConfigTeRngTrackerCheck(), R"(model:
  cuda_graph_impl: transformer_engine
  use_te_rng_tracker: true
rng:
  te_rng_tracker: true
)"),
              IsEmpty());
}

TEST(ConfigTeRngTrackerTest, IgnoresConfigurationsWithoutGraphs) {
  EXPECT_THAT(RunConfigCheck(*NewConfigTeRngTrackerCheck(), "model:\n  cuda_graph_impl: none\n"), IsEmpty());
}

TEST(ConfigTeRngTrackerTest, MegatronArgumentsNeedTheFlagForTransformerEngineGraphs) {
  const std::vector<Finding> findings =
      RunConfigCheck(*NewConfigTeRngTrackerCheck(),
                     "torchrun pretrain_gpt.py \\\n  --cuda-graph-impl transformer_engine\n", ConfigFormat::kArgs);
  ASSERT_THAT(findings, ElementsAre(FindingAt("config-te-rng-tracker", "launch.sh", 2, "--te-rng-tracker")));
  EXPECT_THAT(findings[0].fix, HasSubstr("pass --te-rng-tracker"));
  EXPECT_THAT(RunConfigCheck(*NewConfigTeRngTrackerCheck(), "--cuda-graph-impl transformer_engine --te-rng-tracker",
                             ConfigFormat::kArgs),
              IsEmpty());
}

// Megatron-LM seeds the graph-safe RNG for any CUDA-graph implementation, which local graphs take: the run of
// megatron-core 0.19.2 with cuda_graph_impl="local" and no TE tracker trained (tests/gpu/megatron_gpu_test.cc).
TEST(ConfigTeRngTrackerTest, MegatronCoresOwnGraphsFromItsArgumentsNeedNoTeTracker) {
  for (const char* impl : {"local", "full_iteration"}) {
    EXPECT_THAT(RunConfigCheck(*NewConfigTeRngTrackerCheck(),
                               std::string("torchrun pretrain_gpt.py --cuda-graph-impl ") + impl, ConfigFormat::kArgs),
                IsEmpty())
        << impl;
  }
}

}  // namespace
}  // namespace graphcheck::checks
