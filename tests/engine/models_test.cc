// The built-in models build on the CPU with the inputs the catalog gives them, initialise the same way for the same
// seed, and bad TorchScript or --inputs files are InvalidArgument, not a crash.
#include "engine/models.h"

#include <cstdio>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/serialize.h>

namespace graphcheck {
namespace {

using ::testing::HasSubstr;

const at::Device kCpu(at::kCPU);

TEST(ModelsTest, EveryBuiltinRunsForwardOnItsDefaultInputs) {
  for (const BuiltinModel& builtin : BuiltinModels()) {
    if (builtin.name == "defect/h2d-in-forward") continue;  // its defect is a copy to the GPU
    absl::StatusOr<ModelRef> ref = ResolveModelRef("builtin:" + builtin.name);
    ASSERT_TRUE(ref.ok()) << ref.status();
    absl::StatusOr<Model> model = LoadModel(*ref, kCpu, 0);
    ASSERT_TRUE(model.ok()) << builtin.name << ": " << model.status();
    EXPECT_FALSE(model->callable.parameters.empty()) << builtin.name;
    EXPECT_TRUE(model->callable.hooks.empty());
    const std::vector<at::Tensor> outputs = model->callable.forward(MakeInputs(model->inputs, kCpu, 1));
    ASSERT_EQ(outputs.size(), 1u) << builtin.name;
    EXPECT_TRUE(outputs[0].requires_grad()) << builtin.name;
  }
}

TEST(ModelsTest, SameSeedSameParameters) {
  absl::StatusOr<ModelRef> ref = ResolveModelRef("builtin:transformer");
  ASSERT_TRUE(ref.ok());
  absl::StatusOr<Model> a = LoadModel(*ref, kCpu, 5), b = LoadModel(*ref, kCpu, 5), c = LoadModel(*ref, kCpu, 6);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_TRUE(a->callable.parameters[0].equal(b->callable.parameters[0]));
  EXPECT_FALSE(a->callable.parameters[0].equal(c->callable.parameters[0]));
}

TEST(ModelsTest, MakeInputsHonoursShapeAndDtype) {
  const std::vector<at::Tensor> inputs = MakeInputs({{"x", {2, 3}, "bfloat16"}, {"ids", {5}, "int64"}}, kCpu, 1);
  ASSERT_EQ(inputs.size(), 2u);
  EXPECT_EQ(inputs[0].sizes(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(inputs[0].scalar_type(), at::kBFloat16);
  EXPECT_EQ(inputs[1].scalar_type(), at::kLong);
  EXPECT_LT(inputs[1].max().item<int64_t>(), 10);
  EXPECT_TRUE(MakeInputs({{"x", {4}, "float32"}}, kCpu, 3)[0].equal(MakeInputs({{"x", {4}, "float32"}}, kCpu, 3)[0]));
}

TEST(ModelsTest, UnloadableTorchScriptIsInvalidArgument) {
  const std::string path = ::testing::TempDir() + "/not-torchscript.pt";
  std::ofstream(path) << "PK this is no archive";
  ModelRef ref;
  ref.path = path;
  absl::StatusOr<Model> model = LoadModel(ref, kCpu, 0);
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(model.status().message(), HasSubstr("cannot load TorchScript model"));
  std::remove(path.c_str());
}

TEST(ModelsTest, BadInputsFileIsInvalidArgument) {
  const std::string path = ::testing::TempDir() + "/not-tensors.pt";
  std::ofstream(path) << "garbage";
  absl::StatusOr<std::vector<at::Tensor>> inputs = LoadInputs(path, {{"x", {}, ""}}, kCpu);
  ASSERT_FALSE(inputs.ok());
  EXPECT_THAT(inputs.status().message(), HasSubstr("is not a torch.save file"));
  EXPECT_FALSE(LoadInputs("/nonexistent/inputs.pt", {{"x", {}, ""}}, kCpu).ok());
  std::remove(path.c_str());
}

TEST(ModelsTest, InputsFileFromPickleMatchesByName) {
  // torch::pickle_save writes what Python's torch.save writes for a dict of tensors.
  c10::Dict<std::string, at::Tensor> dict;
  dict.insert("mask", at::ones({2}));
  dict.insert("x", at::zeros({3}));
  const std::vector<char> bytes = torch::pickle_save(c10::IValue(dict));
  const std::string path = ::testing::TempDir() + "/inputs.pt";
  std::ofstream(path, std::ios::binary).write(bytes.data(), bytes.size());
  absl::StatusOr<std::vector<at::Tensor>> inputs = LoadInputs(path, {{"x", {}, ""}, {"mask", {}, ""}}, kCpu);
  ASSERT_TRUE(inputs.ok()) << inputs.status();
  EXPECT_EQ((*inputs)[0].numel(), 3);
  EXPECT_EQ((*inputs)[1].numel(), 2);
  absl::StatusOr<std::vector<at::Tensor>> missing = LoadInputs(path, {{"y", {}, ""}}, kCpu);
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("no tensor named 'y'"));
  std::remove(path.c_str());
}

}  // namespace
}  // namespace graphcheck
