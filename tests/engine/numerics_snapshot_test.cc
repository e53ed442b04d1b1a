// Numerics samples on the CPU: the worst difference and its element, non-finite counts, the eager repeat's spread,
// changed-from-initial flags, and tensors missing from one run or of another shape left out. The built-in
// buffer-rebound model shows its new buffer through named_state, where callable.buffers keeps the old tensor.
#include "engine/numerics_snapshot.h"

#include <cmath>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/models.h"

namespace graphcheck {
namespace {

at::Tensor Values(std::vector<float> values) { return at::tensor(values); }

RunSnapshot Snapshot(std::vector<NamedTensor> tensors) {
  RunSnapshot s;
  s.tensors = std::move(tensors);
  s.took_first_step = true;
  return s;
}

TEST(NumericsSnapshotTest, ComparesEagerAndGraphedElementwise) {
  const RunSnapshot eager = Snapshot({{"output 0", TensorRole::kOutput, Values({1, -4, 2, NAN})}});
  const RunSnapshot repeat = Snapshot({{"output 0", TensorRole::kOutput, Values({1, -4.5, 2, NAN})}});
  const RunSnapshot graphed = Snapshot({{"output 0", TensorRole::kOutput, Values({1, -4, 3.5, INFINITY})}});
  const std::vector<NumericsSample> samples = CompareSnapshots(eager, &repeat, graphed, {});
  ASSERT_EQ(samples.size(), 1u);
  const NumericsSample& s = samples[0];
  EXPECT_EQ(s.name, "output 0");
  EXPECT_EQ(s.role, TensorRole::kOutput);
  EXPECT_EQ(s.dtype, "float32");
  EXPECT_EQ(s.numel, 4);
  EXPECT_DOUBLE_EQ(s.max_abs_error, 1.5);  // element 2; element 3 is not finite in either
  EXPECT_EQ(s.worst_index, 2);
  EXPECT_DOUBLE_EQ(s.eager_at_worst, 2);
  EXPECT_DOUBLE_EQ(s.graphed_at_worst, 3.5);
  EXPECT_DOUBLE_EQ(s.eager_abs_max, 4);
  EXPECT_EQ(s.eager_nonfinite, 1);
  EXPECT_EQ(s.graphed_nonfinite, 1);
  EXPECT_DOUBLE_EQ(s.eager_spread, 0.5);
}

TEST(NumericsSnapshotTest, WithoutARepeatTheSpreadIsUnknown) {
  const RunSnapshot run = Snapshot({{"w", TensorRole::kGradient, Values({1, 2})}});
  const std::vector<NumericsSample> samples = CompareSnapshots(run, nullptr, run, {});
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_EQ(samples[0].max_abs_error, 0);
  EXPECT_LT(samples[0].eager_spread, 0);
}

TEST(NumericsSnapshotTest, StateRemembersWhetherEachRunChangedIt) {
  const std::vector<NamedTensor> initial = {{"steps", TensorRole::kBuffer, Values({0})},
                                            {"w", TensorRole::kParameter, Values({1, 1})}};
  const RunSnapshot eager =
      Snapshot({{"steps", TensorRole::kBuffer, Values({21})}, {"w", TensorRole::kParameter, Values({0.5, 0.5})}});
  const RunSnapshot graphed =
      Snapshot({{"steps", TensorRole::kBuffer, Values({0})}, {"w", TensorRole::kParameter, Values({0.5, 0.5})}});
  const std::vector<NumericsSample> samples = CompareSnapshots(eager, nullptr, graphed, initial);
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_TRUE(samples[0].changed_in_eager);
  EXPECT_FALSE(samples[0].changed_in_graphed);
  EXPECT_DOUBLE_EQ(samples[0].max_abs_error, 21);
  EXPECT_TRUE(samples[1].changed_in_eager);
  EXPECT_TRUE(samples[1].changed_in_graphed);
}

TEST(NumericsSnapshotTest, LeavesOutTensorsNotComparable) {
  const RunSnapshot eager = Snapshot({{"output 0", TensorRole::kOutput, Values({1, 2})},
                                      {"w", TensorRole::kGradient, Values({1, 2})},
                                      {"empty", TensorRole::kBuffer, at::zeros({0})}});
  const RunSnapshot graphed =
      Snapshot({{"output 0", TensorRole::kOutput, Values({1, 2, 3})}, {"empty", TensorRole::kBuffer, at::zeros({0})}});
  EXPECT_TRUE(CompareSnapshots(eager, nullptr, graphed, {}).empty());
}

TEST(NumericsSnapshotTest, FirstStepKeepsOutputsAndGradients) {
  at::Tensor w = at::ones({2}).requires_grad_(true);
  (w * 3).sum().backward();
  RunSnapshot s;
  s.TakeFirstStep({Values({7})}, {{"w", TensorRole::kParameter, w}, {"b", TensorRole::kBuffer, at::ones({1})}});
  ASSERT_EQ(s.tensors.size(), 2u);
  EXPECT_EQ(s.tensors[0].name, "output 0");
  EXPECT_EQ(s.tensors[1].name, "w");
  EXPECT_EQ(s.tensors[1].role, TensorRole::kGradient);
  EXPECT_TRUE(s.tensors[1].tensor.equal(at::full({2}, 3.0)));
  w.grad().zero_();  // a clone: later steps do not change what was taken
  EXPECT_TRUE(s.tensors[1].tensor.equal(at::full({2}, 3.0)));
}

TEST(NumericsSnapshotTest, NamedStateSeesAReboundBuffer) {
  absl::StatusOr<ModelRef> ref = ResolveModelRef("builtin:defect/buffer-rebound");
  ASSERT_TRUE(ref.ok());
  absl::StatusOr<Model> model = LoadModel(*ref, at::Device(at::kCPU), 0);
  ASSERT_TRUE(model.ok()) << model.status();
  const std::vector<at::Tensor> inputs = MakeInputs(model->inputs, at::Device(at::kCPU), 1);
  model->callable.forward(inputs);
  model->callable.forward(inputs);
  float steps = -1;
  for (const NamedTensor& t : model->named_state()) {
    if (t.role == TensorRole::kBuffer && t.name == "steps") steps = t.tensor.item<float>();
  }
  EXPECT_EQ(steps, 2);
}

}  // namespace
}  // namespace graphcheck
