// The launch-bound LibTorch step of the recorder-overhead benchmarks: Linear(1024, 1024) then
// 20 x relu(x * 1.0001 + 0.001), batch 64, and a timer for CUDA-synchronized blocks of it. A step launches 63 kernels
// (60 elementwise, cuBLAS's three for a split-K GEMM) and makes one other CUDA call, cuBLAS's cudaMemsetAsync of 512
// bytes (counted in a trace on an H100).
#ifndef GRAPHCHECK_BENCH_CHAIN_STEP_H_
#define GRAPHCHECK_BENCH_CHAIN_STEP_H_

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "bench/thread_counters.h"

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

  static double MicrosPerStep(double seconds, long steps) { return seconds / static_cast<double>(steps) * 1e6; }

  // The step count that makes the next block last about `block_seconds`, from the last block's.
  static long NextBlockSteps(long steps, double elapsed, double block_seconds) {
    return std::max(1L, static_cast<long>(static_cast<double>(steps) * block_seconds / std::max(elapsed, 1e-6)));
  }

  // Runs the step for `seconds` after 20 warm-up steps, in blocks of about 0.25 s, and prints "us_per_step X" (all
  // timed steps, so a sampling recorder's windows are averaged in), "us_per_step_steady X" (the blocks that start
  // after kSettleSeconds of timed steps: a recorder's first window is over by then, so this is its lasting cost per
  // step) and "us_per_step_slowest_block X"; with `print_blocks`, also "block T_S US_PER_STEP" per block (T_S: seconds
  // of timed steps before it). Over the steady blocks it also prints the CPU time per step of the process's other
  // threads and of its parent (bench/thread_counters.h): the work a recorder adds there, without the wall clock's
  // noise.
  void RunTimed(double seconds, bool print_blocks) {
    TimeBlock(20);
    long block_steps = 50, total_steps = 0, steady_steps = 0;
    double total_s = 0, steady_s = 0, slowest_us = 0;
    BesideCpu steady_start;
    while (total_s < seconds) {
      if (steady_steps == 0 && total_s >= kSettleSeconds) steady_start = BesideCpu::Now();
      const double elapsed = TimeBlock(block_steps);
      if (print_blocks) std::printf("block %.3f %.2f\n", total_s, MicrosPerStep(elapsed, block_steps));
      if (total_s >= kSettleSeconds) {
        steady_steps += block_steps;
        steady_s += elapsed;
      }
      total_steps += block_steps;
      total_s += elapsed;
      slowest_us = std::max(slowest_us, MicrosPerStep(elapsed, block_steps));
      block_steps = NextBlockSteps(block_steps, elapsed, 0.25);
    }
    std::printf("us_per_step %.2f\n", MicrosPerStep(total_s, total_steps));
    if (steady_steps > 0) PrintSteady(steady_s, steady_steps, steady_start);
    std::printf("us_per_step_slowest_block %.2f\n", slowest_us);
  }

  static constexpr double kSettleSeconds = 2;  // bench/overhead_steps.py's SETTLE_SECONDS

 private:
  static void PrintSteady(double seconds, long steps, const BesideCpu& start) {
    std::printf("us_per_step_steady %.2f\n", MicrosPerStep(seconds, steps));
    const BesideCpu end = BesideCpu::Now();
    auto print_cpu = [steps](const char* name, int64_t from_ns, int64_t to_ns) {
      if (from_ns < 0 || to_ns < 0) return;
      std::printf("%s %.3f\n", name, static_cast<double>(to_ns - from_ns) / 1e3 / static_cast<double>(steps));
    };
    print_cpu("other_threads_cpu_us_per_step_steady", start.other_threads_ns, end.other_threads_ns);
    print_cpu("parent_cpu_us_per_step_steady", start.parent_ns, end.parent_ns);
  }

  torch::nn::Linear linear_;
  torch::Tensor x_;
};

}  // namespace graphcheck::bench

#endif  // GRAPHCHECK_BENCH_CHAIN_STEP_H_
