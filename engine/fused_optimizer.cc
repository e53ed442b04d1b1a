#include "engine/fused_optimizer.h"

#include <ATen/core/grad_mode.h>

namespace graphcheck {
namespace {

constexpr double kSgdLearningRate = 0.01;
constexpr double kSgdMomentum = 0.9;
constexpr double kAdamLearningRate = 1e-3;

}  // namespace

FusedOptimizer::FusedOptimizer(Kind kind, std::vector<at::Tensor> parameters)
    : kind_(kind), parameters_(std::move(parameters)) {
  for (const at::Tensor& p : parameters_) {
    first_moments_.push_back(at::zeros_like(p, at::MemoryFormat::Preserve));
    if (kind_ == Kind::kAdam) {
      second_moments_.push_back(at::zeros_like(p, at::MemoryFormat::Preserve));
      steps_.push_back(at::zeros({}, p.options().dtype(at::kFloat)));
    }
  }
}

void FusedOptimizer::Step() {
  at::NoGradGuard no_grad;
  // Parameters the loss did not reach have no gradient and keep their value and state, as in torch.optim.
  std::vector<at::Tensor> params, grads, first, second, steps;
  for (size_t i = 0; i < parameters_.size(); ++i) {
    if (!parameters_[i].grad().defined()) continue;
    params.push_back(parameters_[i]);
    grads.push_back(parameters_[i].grad());
    first.push_back(first_moments_[i]);
    if (kind_ == Kind::kAdam) {
      second.push_back(second_moments_[i]);
      steps.push_back(steps_[i]);
    }
  }
  if (params.empty()) return;
  if (kind_ == Kind::kSgd) {
    // Zeroed momentum buffers make every step a non-first step: the first update is then momentum*0 + grad, which is
    // what the first-step clone gives, and no host branch is left for a graph to freeze.
    at::_fused_sgd_(params, grads, first, /*weight_decay=*/0, kSgdMomentum, kSgdLearningRate, /*dampening=*/0,
                    /*nesterov=*/false, /*maximize=*/false, /*is_first_step=*/false);
  } else {
    at::_foreach_add_(steps, 1);
    at::_fused_adam_(params, grads, first, second, /*max_exp_avg_sqs=*/{}, steps, kAdamLearningRate, /*beta1=*/0.9,
                     /*beta2=*/0.999, /*weight_decay=*/0, /*eps=*/1e-8, /*amsgrad=*/false, /*maximize=*/false);
  }
}

void FusedOptimizer::ZeroGrad(bool set_to_none) {
  at::NoGradGuard no_grad;
  std::vector<at::Tensor> grads;
  for (const at::Tensor& p : parameters_) {
    if (!p.grad().defined()) continue;
    if (set_to_none) {
      p.mutable_grad().reset();
    } else {
      grads.push_back(p.grad());
    }
  }
  if (!grads.empty()) at::_foreach_zero_(grads);
}

void FusedOptimizer::Reset() {
  at::NoGradGuard no_grad;
  for (at::Tensor& t : first_moments_) t.zero_();
  for (at::Tensor& t : second_moments_) t.zero_();
  for (at::Tensor& t : steps_) t.zero_();
}

}  // namespace graphcheck
