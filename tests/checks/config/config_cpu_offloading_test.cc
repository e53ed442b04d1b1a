#include "checks/checks.h"

#include "tests/checks/config/config_check_test_util.h"

namespace graphcheck::checks {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing_util::FindingAt;
using testing_util::RunConfigCheck;

TEST(ConfigCpuOffloadingTest, FlagsOffloadingWithGraphs) {
  const std::vector<Finding> findings = RunConfigCheck(*NewConfigCpuOffloadingCheck(), R"(model:
  cuda_graph_impl: transformer_engine
  cuda_graph_scope: [attn]
  cpu_offloading: true
)");
  ASSERT_THAT(findings, ElementsAre(FindingAt("config-cpu-offloading", "train.yaml", 4, "model.cpu_offloading")));
  EXPECT_THAT(findings[0].fix, HasSubstr("set model.cpu_offloading: false"));
}

TEST(ConfigCpuOffloadingTest, AcceptsOffloadingOff) {
  EXPECT_THAT(RunConfigCheck(*NewConfigCpuOffloadingCheck(), R"(model:
  cuda_graph_impl: transformer_engine
  cpu_offloading: false
)"),
              IsEmpty());
}

TEST(ConfigCpuOffloadingTest, AcceptsOffloadingWithoutGraphs) {
  EXPECT_THAT(RunConfigCheck(*NewConfigCpuOffloadingCheck(), "model:\n  cpu_offloading: true\n"), IsEmpty());
}

}  // namespace
}  // namespace graphcheck::checks
