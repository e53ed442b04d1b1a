// The fused optimizers on the CPU: SGD with momentum and Adam match the textbook update, keep their step count in a
// tensor, and Reset returns to the initial state.
#include "engine/fused_optimizer.h"

#include <gtest/gtest.h>

namespace graphcheck {
namespace {

TEST(FusedOptimizerTest, SgdMomentumUpdate) {
  at::Tensor p = at::ones({3}).requires_grad_();
  p.mutable_grad() = at::full({3}, 2.0);
  FusedOptimizer sgd(FusedOptimizer::Kind::kSgd, {p});
  sgd.Step();  // buf = g = 2; p = 1 - 0.01 * 2
  EXPECT_NEAR(p[0].item<double>(), 0.98, 1e-6);
  sgd.Step();  // buf = 0.9 * 2 + 2 = 3.8; p = 0.98 - 0.038
  EXPECT_NEAR(p[0].item<double>(), 0.942, 1e-6);
  sgd.ZeroGrad();
  EXPECT_EQ(p.grad().abs().sum().item<double>(), 0);
}

// Reset forgets the moments and the step count. With a constant gradient every Adam step moves by lr whatever the
// state, so the gradient flips sign after the first step: a second step would move by only ~0.05 lr (the moments
// still remember +0.5), a first step after Reset by lr.
TEST(FusedOptimizerTest, AdamResetStartsFromAFirstStep) {
  at::Tensor p = at::zeros({2}).requires_grad_();
  p.mutable_grad() = at::full({2}, 0.5);
  FusedOptimizer adam(FusedOptimizer::Kind::kAdam, {p});
  adam.Step();  // bias-corrected first step: p -= lr * sign(g)
  EXPECT_NEAR(p[0].item<double>(), -1e-3, 1e-6);
  adam.Reset();
  p.detach().zero_();
  p.mutable_grad() = at::full({2}, -0.5);
  adam.Step();
  EXPECT_NEAR(p[0].item<double>(), 1e-3, 1e-6);
}

// SGD's momentum buffer: a second step with the same gradient moves by (1 + momentum) lr g, a first step after Reset
// by lr g again.
TEST(FusedOptimizerTest, SgdResetForgetsTheMomentum) {
  at::Tensor p = at::zeros({2}).requires_grad_();
  p.mutable_grad() = at::ones({2});
  FusedOptimizer sgd(FusedOptimizer::Kind::kSgd, {p});
  sgd.Step();
  EXPECT_NEAR(p[0].item<double>(), -0.01, 1e-7);
  sgd.Step();
  EXPECT_NEAR(p[0].item<double>(), -0.01 - 0.019, 1e-7);
  sgd.Reset();
  p.detach().zero_();
  sgd.Step();
  EXPECT_NEAR(p[0].item<double>(), -0.01, 1e-7);
}

TEST(FusedOptimizerTest, ParametersWithoutGradientsStayPut) {
  at::Tensor used = at::ones({2}).requires_grad_(), unused = at::ones({2}).requires_grad_();
  used.mutable_grad() = at::ones({2});
  FusedOptimizer sgd(FusedOptimizer::Kind::kSgd, {used, unused});
  sgd.Step();
  EXPECT_LT(used[0].item<double>(), 1.0);
  EXPECT_EQ(unused[0].item<double>(), 1.0);
  sgd.ZeroGrad(/*set_to_none=*/true);
  EXPECT_FALSE(used.grad().defined());
}

}  // namespace
}  // namespace graphcheck
