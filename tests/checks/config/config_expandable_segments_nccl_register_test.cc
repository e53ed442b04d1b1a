#include "checks/checks.h"

#include "tests/checks/config/config_check_test_util.h"

namespace graphcheck::checks {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testing_util::FindingAt;
using testing_util::RunConfigCheck;

TEST(ConfigExpandableSegmentsNcclRegisterTest, FlagsTheConfiguredEnvironment) {
  EXPECT_THAT(
      RunConfigCheck(*NewConfigExpandableSegmentsNcclRegisterCheck(), R"(model:
  cuda_graph_impl: transformer_engine
executor:
  env_vars:
    PYTORCH_CUDA_ALLOC_CONF: expandable_segments:True
)"),
      ElementsAre(FindingAt("config-expandable-segments-nccl-register", "train.yaml", 5, "PYTORCH_CUDA_ALLOC_CONF")));
}

TEST(ConfigExpandableSegmentsNcclRegisterTest, AcceptsRegistrationOff) {
  EXPECT_THAT(RunConfigCheck(*NewConfigExpandableSegmentsNcclRegisterCheck(), R"(model:
  cuda_graph_impl: transformer_engine
env_vars:
  - PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
  - NCCL_GRAPH_REGISTER=0
)"),
              IsEmpty());
}

TEST(ConfigExpandableSegmentsNcclRegisterTest, ReadsLaunchScriptAssignments) {
  EXPECT_THAT(
      RunConfigCheck(*NewConfigExpandableSegmentsNcclRegisterCheck(),
                     "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\n"
                     "torchrun pretrain_gpt.py --cuda-graph-impl local\n",
                     ConfigFormat::kArgs),
      ElementsAre(FindingAt("config-expandable-segments-nccl-register", "launch.sh", 1, "PYTORCH_CUDA_ALLOC_CONF")));
}

}  // namespace
}  // namespace graphcheck::checks
