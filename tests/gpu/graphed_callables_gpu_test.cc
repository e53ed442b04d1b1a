// GPU tests of graphcheck::MakeGraphedCallables (label gpu): graphed training with a stock torch::optim optimizer
// reproduces eager training of an identical model bitwise over 20 steps with deterministic kernels (the transformer
// with dropout included), capture failures come back as a Status and leave the process usable, and the capture
// options work.
#include "engine/graphed_callables.h"

#include <ATen/Context.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/cuda.h>
#include <torch/optim.h>

#include "core/model_spec.h"
#include "engine/models.h"
#include "tests/gpu/gpu_test_env.h"

namespace graphcheck {
namespace {

using ::testing::HasSubstr;

constexpr int kSteps = 20;
constexpr uint64_t kSeed = 7;

class GraphedCallablesGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!gpu_test::HasGpu() || !torch::cuda::is_available()) GTEST_SKIP() << gpu_test::kNoGpu;
    // Deterministic kernels, so that graphed can be held to eager bitwise: with cuDNN's defaults the convnet's
    // losses drifted 0.6% apart by step 20 on an H100, from convolution backward alone.
    at::globalContext().setDeterministicCuDNN(true);
    at::globalContext().setBenchmarkCuDNN(false);
    at::globalContext().setAllowTF32CuDNN(false);
    at::globalContext().setAllowTF32CuBLAS(false);
  }
  const at::Device device_{at::kCUDA, 0};
};

Model Builtin(const std::string& name, const at::Device& device) {
  absl::StatusOr<ModelRef> ref = ResolveModelRef("builtin:" + name);
  EXPECT_TRUE(ref.ok()) << ref.status();
  absl::StatusOr<Model> model = LoadModel(*ref, device, kSeed);
  EXPECT_TRUE(model.ok()) << model.status();
  return *std::move(model);
}

using Forward = std::function<std::vector<at::Tensor>(const std::vector<at::Tensor>&)>;

// 20 training steps with Adam (torch::optim, host-side state) on fresh batches; the losses.
std::vector<double> Train(const Forward& forward, const std::vector<at::Tensor>& parameters,
                          const std::vector<InputSpec>& inputs, const at::Device& device) {
  torch::optim::Adam optimizer(parameters, torch::optim::AdamOptions(1e-3));
  at::manual_seed(kSeed);  // dropout: the same random stream for both runs
  std::vector<double> losses;
  for (int step = 0; step < kSteps; ++step) {
    optimizer.zero_grad();
    const at::Tensor loss = forward(MakeInputs(inputs, device, 100 + step)).at(0).square().mean();
    loss.backward();
    optimizer.step();
    losses.push_back(loss.item<double>());
  }
  return losses;
}

void ExpectGraphedTrainingMatchesEager(const std::string& name, const at::Device& device) {
  Model eager = Builtin(name, device);
  Model graphed_model = Builtin(name, device);
  eager.set_training(true);
  graphed_model.set_training(true);
  const std::vector<double> eager_losses =
      Train(eager.callable.forward, eager.callable.parameters, eager.inputs, device);

  std::vector<c10::IValue> sample;
  for (const at::Tensor& t : MakeInputs(graphed_model.inputs, device, 1)) sample.emplace_back(t);
  absl::StatusOr<GraphedCallables> graphed = MakeGraphedCallables({graphed_model.callable}, {sample});
  ASSERT_TRUE(graphed.ok()) << graphed.status();
  const GraphedCallable& callable = graphed->callables.front();
  EXPECT_GT(callable.forward_nodes(), 0u);
  EXPECT_GT(callable.backward_nodes(), 0u);
  const std::vector<double> graphed_losses = Train([&](const std::vector<at::Tensor>& in) { return callable(in); },
                                                   graphed_model.callable.parameters, graphed_model.inputs, device);

  ASSERT_EQ(graphed_losses.size(), eager_losses.size());
  for (int i = 0; i < kSteps; ++i) EXPECT_EQ(graphed_losses[i], eager_losses[i]) << name << " step " << i;
  // Training moved: the comparison is not between two constant sequences.
  EXPECT_NE(eager_losses.front(), eager_losses.back());
}

TEST_F(GraphedCallablesGpuTest, MlpTrainingMatchesEager) { ExpectGraphedTrainingMatchesEager("mlp", device_); }
TEST_F(GraphedCallablesGpuTest, TransformerWithDropoutTrainingMatchesEager) {
  ExpectGraphedTrainingMatchesEager("transformer", device_);
}
TEST_F(GraphedCallablesGpuTest, ConvnetTrainingMatchesEager) { ExpectGraphedTrainingMatchesEager("convnet", device_); }

TEST_F(GraphedCallablesGpuTest, CaptureFailureIsAStatusAndTheProcessGoesOn) {
  Model model = Builtin("defect/item-in-forward", device_);
  std::vector<c10::IValue> sample;
  for (const at::Tensor& t : MakeInputs(model.inputs, device_, 1)) sample.emplace_back(t);
  std::vector<std::string> phases;
  GraphOptions options;
  options.on_phase = [&](absl::string_view phase, double, bool ok) {
    phases.push_back(std::string(phase) + (ok ? ":ok" : ":failed"));
  };
  absl::StatusOr<GraphedCallables> graphed = MakeGraphedCallables({model.callable}, {sample}, options);
  ASSERT_FALSE(graphed.ok());
  EXPECT_EQ(graphed.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(graphed.status().message(), HasSubstr("forward capture of 'defect/item-in-forward'"));
  EXPECT_THAT(phases, ::testing::ElementsAre("warmup:ok", "forward-capture:failed"));
  // The capture was ended: eager work, including a synchronizing read, still runs.
  EXPECT_EQ(at::ones({4}, at::TensorOptions(device_)).sum().item<float>(), 4.0f);
}

TEST_F(GraphedCallablesGpuTest, RelaxedAndThreadLocalCaptureModesGraph) {
  for (CaptureErrorMode mode : {CaptureErrorMode::kRelaxed, CaptureErrorMode::kThreadLocal}) {
    Model model = Builtin("mlp", device_);
    std::vector<c10::IValue> sample;
    for (const at::Tensor& t : MakeInputs(model.inputs, device_, 1)) sample.emplace_back(t);
    GraphOptions options;
    options.capture_error_mode = mode;
    options.warmup_iterations = 1;
    absl::StatusOr<GraphedCallables> graphed = MakeGraphedCallables({model.callable}, {sample}, options);
    ASSERT_TRUE(graphed.ok()) << graphed.status();
    const std::vector<at::Tensor> out = graphed->callables.front()(MakeInputs(model.inputs, device_, 2));
    EXPECT_EQ(out.at(0).sizes(), (std::vector<int64_t>{64, 1024}));
  }
}

TEST_F(GraphedCallablesGpuTest, UnusedInputNeedsAllowUnusedInput) {
  const at::Tensor used = at::randn({8, 8}, at::TensorOptions(device_)).requires_grad_();
  const at::Tensor unused = at::randn({8}, at::TensorOptions(device_)).requires_grad_();
  Callable callable;
  callable.name = "unused-parameter";
  callable.forward = [used](const std::vector<at::Tensor>& in) { return std::vector<at::Tensor>{in[0].matmul(used)}; };
  callable.parameters = {used, unused};
  const std::vector<c10::IValue> sample = {at::randn({4, 8}, at::TensorOptions(device_))};

  absl::StatusOr<GraphedCallables> strict = MakeGraphedCallables({callable}, {sample});
  ASSERT_FALSE(strict.ok());
  EXPECT_THAT(strict.status().message(), HasSubstr("warmup"));

  GraphOptions options;
  options.allow_unused_input = true;
  absl::StatusOr<GraphedCallables> allowed = MakeGraphedCallables({callable}, {sample}, options);
  ASSERT_TRUE(allowed.ok()) << allowed.status();
  const at::Tensor loss = allowed->callables.front()({at::randn({4, 8}, at::TensorOptions(device_))}).at(0).sum();
  loss.backward();
  EXPECT_TRUE(used.grad().defined());
  EXPECT_FALSE(unused.grad().defined());
}

TEST_F(GraphedCallablesGpuTest, SeveralCallablesShareOnePoolAndChain) {
  Model first = Builtin("mlp", device_);
  Model second = Builtin("mlp", device_);
  const at::Tensor x = MakeInputs(first.inputs, device_, 1).at(0);
  std::vector<c10::IValue> first_sample = {x};
  // The second callable's sample input is the first's output, requiring grad, as in a pipeline of layers.
  const at::Tensor hidden = first.callable.forward({x}).at(0).detach().requires_grad_();
  std::vector<c10::IValue> second_sample = {hidden};
  absl::StatusOr<GraphedCallables> graphed =
      MakeGraphedCallables({first.callable, second.callable}, {first_sample, second_sample});
  ASSERT_TRUE(graphed.ok()) << graphed.status();
  EXPECT_GT(GraphPoolBytes(graphed->pool), 0u);
  const at::Tensor out = graphed->callables[1](graphed->callables[0]({x})).at(0);
  out.square().mean().backward();
  EXPECT_GT(first.callable.parameters.front().grad().abs().sum().item<double>(), 0);
}

}  // namespace
}  // namespace graphcheck
