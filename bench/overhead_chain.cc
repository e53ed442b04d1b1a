// The C++ launch-bound step of the recorder-overhead benchmark: LibTorch Linear(1024, 1024) then
// 20 x relu(x * 1.0001 + 0.001), batch 64 (42 kernels). Runs it for SECONDS (default 20) after 20 warm-up steps, in
// CUDA-synchronized blocks of about 0.25 s, and prints "us_per_step X" (all timed steps, so a sampling recorder's
// windows are averaged in) and "us_per_step_slowest_block X". With BLOCKS=1 in the environment it also prints
// "block T_S US_PER_STEP" per block (T_S: seconds since the timed steps began), to see where a recorder's cost falls.
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::atof(argv[1]) : 20;
  torch::manual_seed(0);
  torch::NoGradGuard no_grad;
  torch::nn::Linear linear(1024, 1024);
  linear->to(torch::kCUDA);
  const torch::Tensor x = torch::randn({64, 1024}, torch::kCUDA);
  auto step = [&] {
    torch::Tensor y = linear(x);
    for (int i = 0; i < 20; ++i) y = torch::relu(y * 1.0001 + 0.001);
    return y;
  };
  for (int i = 0; i < 20; ++i) step();
  torch::cuda::synchronize();
  long block_steps = 50, total_steps = 0;
  double total_s = 0, slowest_us = 0;
  const char* blocks_env = std::getenv("BLOCKS");
  const bool print_blocks = blocks_env != nullptr && std::string(blocks_env) == "1";
  const auto timed_start = std::chrono::steady_clock::now();
  while (total_s < seconds) {
    const auto start = std::chrono::steady_clock::now();
    for (long i = 0; i < block_steps; ++i) step();
    torch::cuda::synchronize();
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    total_steps += block_steps;
    total_s += elapsed;
    slowest_us = std::max(slowest_us, elapsed / block_steps * 1e6);
    if (print_blocks) {
      std::printf("block %.3f %.2f\n", std::chrono::duration<double>(start - timed_start).count(),
                  elapsed / block_steps * 1e6);
    }
    block_steps = std::max(1L, static_cast<long>(block_steps * 0.25 / std::max(elapsed, 1e-6)));
  }
  std::printf("us_per_step %.2f\n", total_s / total_steps * 1e6);
  std::printf("us_per_step_slowest_block %.2f\n", slowest_us);
  return 0;
}
