// The launch-bound LibTorch step of the recorder-overhead benchmarks: Linear(1024, 1024) then
// 20 x relu(x * 1.0001 + 0.001), batch 64 (42 kernels), and a timer for CUDA-synchronized blocks of it.
#ifndef GRAPHCHECK_BENCH_CHAIN_STEP_H_
#define GRAPHCHECK_BENCH_CHAIN_STEP_H_

#include <torch/torch.h>

#include <algorithm>
#include <chrono>

namespace graphcheck::bench {

class ChainStep {
 public:
  ChainStep() : linear_(1024, 1024) {
    torch::manual_seed(0);
    linear_->to(torch::kCUDA);
    x_ = torch::randn({64, 1024}, torch::kCUDA);
  }

  void Run() {
    torch::NoGradGuard no_grad;
    torch::Tensor y = linear_(x_);
    for (int i = 0; i < 20; ++i) y = torch::relu(y * 1.0001 + 0.001);
  }

  // Runs `steps` steps and waits for the GPU; returns the seconds taken.
  double TimeBlock(long steps) {
    const auto start = std::chrono::steady_clock::now();
    for (long i = 0; i < steps; ++i) Run();
    torch::cuda::synchronize();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }

  // The step count that makes the next block last about `block_seconds`, from the last block's.
  static long NextBlockSteps(long steps, double elapsed, double block_seconds) {
    return std::max(1L, static_cast<long>(steps * block_seconds / std::max(elapsed, 1e-6)));
  }

 private:
  torch::nn::Linear linear_;
  torch::Tensor x_;
};

}  // namespace graphcheck::bench

#endif  // GRAPHCHECK_BENCH_CHAIN_STEP_H_
