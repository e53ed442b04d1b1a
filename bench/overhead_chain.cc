// The C++ launch-bound step of the recorder-overhead benchmark: LibTorch Linear(1024, 1024) then
// 20 x relu(x * 1.0001 + 0.001), batch 64 (42 kernels). Prints "us_per_step X": the median of 7 timed blocks.
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 300;
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
  std::vector<double> per_step;
  for (int block = 0; block < 7; ++block) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < steps; ++i) step();
    torch::cuda::synchronize();
    per_step.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() /
                       steps);
  }
  std::nth_element(per_step.begin(), per_step.begin() + 3, per_step.end());
  std::printf("us_per_step %.2f\n", per_step[3]);
  return 0;
}
