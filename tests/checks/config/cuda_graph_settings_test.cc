// Whether a configuration turns CUDA graphs on, with which implementation and scopes.
#include "checks/config/cuda_graph_settings.h"

#include <gtest/gtest.h>

#include "checks/config/config_parser.h"

namespace graphcheck::checks {
namespace {

TEST(CudaGraphSettingsTest, ReadsImplementationAndScopeList) {
  absl::StatusOr<ConfigDocument> doc =
      ParseConfigText("model:\n  cuda_graph_impl: transformer_engine\n  cuda_graph_scope: [attn, moe_router]\n",
                      "a.yaml", ConfigFormat::kYaml);
  ASSERT_TRUE(doc.ok()) << doc.status();
  const CudaGraphSettings graphs = CudaGraphSettings::From(*doc);
  EXPECT_TRUE(graphs.enabled());
  EXPECT_EQ(graphs.impl_name, "transformer_engine");
  EXPECT_TRUE(graphs.HasScope("attn"));
  EXPECT_TRUE(graphs.HasScope("moe_router"));
  EXPECT_FALSE(graphs.HasScope("moe"));
  EXPECT_EQ(graphs.anchor().line, 2);
}

TEST(CudaGraphSettingsTest, GraphsAreOffWhenNothingTurnsThemOn) {
  absl::StatusOr<ConfigDocument> doc = ParseConfigText("model:\n  num_layers: 4\n", "a.yaml", ConfigFormat::kYaml);
  ASSERT_TRUE(doc.ok());
  EXPECT_FALSE(CudaGraphSettings::From(*doc).enabled());
}

}  // namespace
}  // namespace graphcheck::checks
