// The base of the graph-only configuration rules: it calls the rule only when the configuration turns CUDA graphs on,
// and GraphFinding names the setting that did as the first evidence.
#include "checks/config/cuda_graph_config_check.h"

#include "tests/checks/config/config_check_test_util.h"

namespace graphcheck::checks {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing_util::RunConfigCheck;

// A rule that reports every configuration with graphs on, at the implementation setting.
class EveryGraphConfigCheck : public CudaGraphConfigCheck {
 public:
  EveryGraphConfigCheck()
      : CudaGraphConfigCheck(CheckInfo{
            "every-graph-config", "graphs on", Severity::kError, CheckArea::kConfiguration, "test rule", {}}) {}

 protected:
  void CheckGraphs(const ConfigDocument& config, const CudaGraphSettings& graphs, const BoundOptions& options,
                   std::vector<Finding>* findings) const override {
    Location where;
    where.key = "model.cuda_graph_impl";
    findings->push_back(GraphFinding(graphs, where, "graphs are on", "turn them off"));
  }
};

TEST(CudaGraphConfigCheckTest, RunsTheRuleWhenGraphsAreOnWithTheSettingAsEvidence) {
  const std::vector<Finding> findings = RunConfigCheck(EveryGraphConfigCheck(), R"(model:
  cuda_graph_impl: transformer_engine
)");
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].check_id, "every-graph-config");
  EXPECT_EQ(findings[0].severity, Severity::kError);
  EXPECT_EQ(findings[0].message, "graphs are on");
  EXPECT_EQ(findings[0].fix, "turn them off");
  ASSERT_FALSE(findings[0].evidence.empty());
  EXPECT_THAT(findings[0].evidence[0], HasSubstr("model.cuda_graph_impl: transformer_engine"));
}

TEST(CudaGraphConfigCheckTest, SkipsConfigurationsWithoutGraphs) {
  EXPECT_THAT(RunConfigCheck(EveryGraphConfigCheck(), "model:\n  cuda_graph_impl: none\n"), IsEmpty());
  EXPECT_THAT(RunConfigCheck(EveryGraphConfigCheck(), "model:\n  num_layers: 4\n"), IsEmpty());
}

}  // namespace
}  // namespace graphcheck::checks
