#include "core/model_spec.h"

#include <cstdio>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace graphcheck {
namespace {

using ::testing::HasSubstr;

TEST(ModelSpecTest, ParsesInputSpecs) {
  absl::StatusOr<InputSpec> spec = ParseInputSpec("tokens:8x128:int64");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->name, "tokens");
  EXPECT_EQ(spec->shape, (std::vector<int64_t>{8, 128}));
  EXPECT_EQ(spec->dtype, "int64");
}

TEST(ModelSpecTest, RejectsBadInputSpecs) {
  EXPECT_THAT(ParseInputSpec("x:8x128").status().message(), HasSubstr("NAME:DIMxDIMx...:DTYPE"));
  EXPECT_THAT(ParseInputSpec(":8:float32").status().message(), HasSubstr("NAME:DIMxDIMx...:DTYPE"));
  EXPECT_THAT(ParseInputSpec("x:8x0:float32").status().message(), HasSubstr("dimension '0'"));
  EXPECT_THAT(ParseInputSpec("x:8x-1:float32").status().message(), HasSubstr("dimension '-1'"));
  EXPECT_THAT(ParseInputSpec("x:8:complex64").status().message(), HasSubstr("unknown dtype 'complex64'"));
}

TEST(ModelSpecTest, ParsesVariedDimensions) {
  absl::StatusOr<VariedDimension> varied = ParseVariedDimension("input_ids:1=128,256,512");
  ASSERT_TRUE(varied.ok()) << varied.status();
  EXPECT_EQ(*varied, (VariedDimension{"input_ids", 1, {128, 256, 512}}));
  for (const char* bad : {"x", ":0=16", "x:=16", "x:-1=16", "x:0", "x:0=", "x:0=16,0", "x:0=16,a", "x:0=16,16"}) {
    EXPECT_EQ(ParseVariedDimension(bad).status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
}

TEST(ModelSpecTest, BuiltinCatalog) {
  bool has_defect = false;
  for (const char* name : {"mlp", "transformer", "convnet"}) {
    absl::StatusOr<ModelRef> ref = ResolveModelRef(std::string("builtin:") + name);
    ASSERT_TRUE(ref.ok()) << name;
    EXPECT_TRUE(ref->builtin->expected_checks.empty()) << name;
    EXPECT_FALSE(ref->builtin->inputs.empty()) << name;
  }
  for (const BuiltinModel& model : BuiltinModels()) {
    has_defect |= model.name.rfind("defect/", 0) == 0;
    EXPECT_EQ(model.name.rfind("defect/", 0) == 0, !model.expected_checks.empty()) << model.name;
  }
  EXPECT_TRUE(has_defect);
  EXPECT_THAT(ResolveModelRef("builtin:resnet").status().message(), HasSubstr("one of mlp, transformer"));
}

TEST(ModelSpecTest, ModelFilesMustBeZipArchives) {
  EXPECT_THAT(ResolveModelRef("/nonexistent/model.pt").status().message(), HasSubstr("cannot read"));
  const std::string path = ::testing::TempDir() + "/model.txt";
  std::ofstream(path) << "not a zip";
  EXPECT_THAT(ResolveModelRef(path).status().message(), HasSubstr("not a TorchScript archive"));
  std::ofstream(path) << "PK\x03\x04";
  absl::StatusOr<ModelRef> ref = ResolveModelRef(path);
  ASSERT_TRUE(ref.ok());
  EXPECT_EQ(ref->path, path);
  EXPECT_EQ(ref->builtin, nullptr);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace graphcheck
