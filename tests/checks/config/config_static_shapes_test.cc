#include "checks/checks.h"

#include "tests/checks/config/config_check_test_util.h"

namespace graphcheck::checks {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testing_util::FindingAt;
using testing_util::RunConfigCheck;

TEST(ConfigStaticShapesTest, FlagsEveryShapeChangingSetting) {
  EXPECT_THAT(
      RunConfigCheck(*NewConfigStaticShapesCheck(), R"(model:
  cuda_graph_impl: local
  variable_seq_lengths: true
train:
  rampup_batch_size: [16, 16, 1000]
dataset:
  packed_sequence_specs:
    packed_sequence_size: 4096
)"),
      ElementsAre(FindingAt("config-static-shapes", "train.yaml", 3, "model.variable_seq_lengths"),
                  FindingAt("config-static-shapes", "train.yaml", 5, "train.rampup_batch_size"),
                  FindingAt("config-static-shapes", "train.yaml", 8, "dataset.packed_sequence_specs.pad_cu_seqlens")));
}

TEST(ConfigStaticShapesTest, AcceptsFixedShapes) {
  EXPECT_THAT(RunConfigCheck(*NewConfigStaticShapesCheck(), R"(model:
  cuda_graph_impl: local
  variable_seq_lengths: false
  seq_length: 4096
train:
  micro_batch_size: 1
  rampup_batch_size: null
dataset:
  packed_sequence_specs:
    packed_sequence_size: 4096
    pad_cu_seqlens: true
)"),
              IsEmpty());
}

}  // namespace
}  // namespace graphcheck::checks
